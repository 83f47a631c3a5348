"""Qwen-family models log "Sliding Window Attention is enabled but not implemented for `sdpa`" while
being built with a window in their config and any attention other than flash_attention_2.

Which model prints it depends on the release (the record's reading): Qwen2 with use_sliding_window
on before 4.49; Qwen2/Qwen3 with only a sliding_window number (use_sliding_window off) in
4.49-4.52; only Qwen2-VL / Qwen2.5-VL / Qwen2.5-Omni (use_sliding_window on) from 4.53. Tiny models
built in code; the line goes through transformers' logger (warning_once)."""

from verification.cases.transformers._tf import fresh_once, needs, refute, version

BACKEND = "transformers"
REQUIRES = {"packages": ["transformers", "torch"]}
STEP_REQUIRES = {"fix_2": {"cuda": True, "arch": "sm80+", "packages": ["flash_attn"]}}

LOGGER = "transformers"
SIZE = dict(hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=2,
            num_hidden_layers=2, vocab_size=128, max_position_embeddings=256)
WINDOW = 4


def qwen2(use_sliding_window, sliding_window=WINDOW, attn="sdpa", cls="Qwen2"):
    def run():
        import transformers

        config = getattr(transformers, f"{cls}Config")(use_sliding_window=use_sliding_window,
                                                         sliding_window=sliding_window, **SIZE)
        return transformers.AutoModelForCausalLM.from_config(config, attn_implementation=attn)
    return run


def qwen2_vl_text(attn="sdpa"):
    def run():
        from transformers.models.qwen2_vl.configuration_qwen2_vl import Qwen2VLTextConfig
        from transformers.models.qwen2_vl.modeling_qwen2_vl import Qwen2VLTextModel

        config = Qwen2VLTextConfig(use_sliding_window=True, sliding_window=WINDOW, **SIZE)
        config._attn_implementation = attn
        return Qwen2VLTextModel(config)
    return run


def reproduce(ctx):
    fresh_once()
    v = version()
    if v < (4, 49):
        ctx.note("Qwen2 with use_sliding_window=True, sdpa")
        ctx.expect_logged(LOGGER, qwen2(True))
    elif v < (4, 53):
        # The spurious case: no window in use, only the number in the config.
        ctx.note("Qwen2 (and Qwen3 where it exists) with use_sliding_window=False, sliding_window=4, sdpa")
        ctx.expect_logged(LOGGER, qwen2(False))
        if v >= (4, 51):
            fresh_once()
            text, _ = ctx.expect_logged(LOGGER, qwen2(False, cls="Qwen3"))
            ctx.note(f"Qwen3 logs it too: {text!r}")
    else:
        ctx.note("Qwen2-VL's text model with use_sliding_window=True, sdpa")
        ctx.expect_logged(LOGGER, qwen2_vl_text())


def fix_1(ctx):
    # With use_sliding_window off, the window number changes nothing: the same weights give the
    # same logits with and without it on a sequence four times longer than the window.
    t = ctx.torch
    fresh_once()
    ctx.seed(0)
    with_number = qwen2(False)()
    without = qwen2(False, sliding_window=None)()
    without.load_state_dict(with_number.state_dict())
    ids = t.randint(1, 128, (1, 4 * WINDOW))
    with t.no_grad():
        a, b = with_number(ids).logits, without(ids).logits
    ctx.note(f"config after loading: use_sliding_window={with_number.config.use_sliding_window}, "
             f"sliding_window={with_number.config.sliding_window}, attn={with_number.config._attn_implementation}")
    ctx.close(a, b, atol=1e-5, what="logits with sliding_window=4 vs None (use_sliding_window off)")


def fix_2(ctx):
    # FlashAttention-2 applies the window: needs flash_attn on an sm80+ GPU (STEP_REQUIRES).
    model = ctx.not_logged(LOGGER, qwen2(True, attn="flash_attention_2"))
    ctx.note(f"attn={model.config._attn_implementation}")


def fix_3(ctx):
    # From 4.53 the Qwen2/Qwen3 text models no longer print it.
    needs(ctx, low="4.53", why="the fix is the upgrade to 4.53 or later")
    for cls in ("Qwen2", "Qwen3"):
        fresh_once()
        model = ctx.not_logged(LOGGER, qwen2(False, cls=cls))
        ctx.note(f"{cls}: sliding_window={model.config.sliding_window}, built with "
                 f"{model.config._attn_implementation}, nothing logged")
        fresh_once()
        ctx.not_logged(LOGGER, qwen2(True, cls=cls))
        ctx.note(f"{cls} with use_sliding_window=True: nothing logged either")
