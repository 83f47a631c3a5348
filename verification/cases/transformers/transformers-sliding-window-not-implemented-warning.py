"""Qwen-family models log "Sliding Window Attention is enabled but not implemented for `sdpa`" while
being built with a window in their config and any attention other than flash_attention_2.

Which model prints it depends on the release (the record's reading): Qwen2 with use_sliding_window
on before 4.49; Qwen2 (4.49-4.51) and Qwen3 (4.51-4.52) with only a sliding_window number
(use_sliding_window off); Qwen2 with the flag on in 4.52; only Qwen2-VL / Qwen2.5-VL / Qwen2.5-Omni
(use_sliding_window on) from 4.53. With the flag off, the sdpa/eager mask still applies the number in
Qwen2 4.49-4.51 and Qwen3 4.51, and nowhere else (fix_1). Tiny models built in code; the line goes
through transformers' logger (warning_once)."""

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
        if v < (4, 52):
            # The case the record is about: only the number in the config, the flag off.
            ctx.note("Qwen2 with use_sliding_window=False, sliding_window=4, sdpa")
            ctx.expect_logged(LOGGER, qwen2(False))
        else:
            ctx.note("Qwen2 with use_sliding_window=True, sdpa (4.52 reads the flag)")
            ctx.expect_logged(LOGGER, qwen2(True))
            fresh_once()
            ctx.not_logged(LOGGER, qwen2(False))
            ctx.note("Qwen2 with use_sliding_window=False: nothing logged")
        if v >= (4, 51):
            fresh_once()
            text, _ = ctx.expect_logged(LOGGER, qwen2(False, cls="Qwen3"))
            ctx.note(f"Qwen3 with use_sliding_window=False logs it too: {text!r}")
    else:
        ctx.note("Qwen2-VL's text model with use_sliding_window=True, sdpa")
        ctx.expect_logged(LOGGER, qwen2_vl_text())


def cleared(cls, attn="sdpa"):
    """The fix: a config with the flag off and a window number gets sliding_window=None before the
    model is built from it."""
    def run():
        import transformers

        config = getattr(transformers, f"{cls}Config")(use_sliding_window=False, sliding_window=WINDOW, **SIZE)
        if not config.use_sliding_window:
            config.sliding_window = None
        return transformers.AutoModelForCausalLM.from_config(config, attn_implementation=attn)
    return run


def fix_1(ctx):
    # With use_sliding_window off, clearing sliding_window before building must (a) log nothing and
    # (b) give the full-context logits (those of a model never given a number), on a sequence four
    # times longer than the window. The record also says when the number mattered with the flag off:
    # Qwen2 4.49-4.51 and Qwen3 4.51 window the sdpa mask anyway (logits differ), elsewhere they don't.
    t = ctx.torch
    v = version()
    windowed = (4, 49) <= v < (4, 52)
    classes = ["Qwen2"] + (["Qwen3"] if v >= (4, 51) else [])
    ctx.seed(0)
    ids = t.randint(1, 128, (1, 4 * WINDOW))
    for cls in classes:
        fresh_once()
        ctx.seed(0)
        fixed = ctx.not_logged(LOGGER, cleared(cls))
        full = qwen2(False, sliding_window=None, cls=cls)()
        shipped = qwen2(False, cls=cls)()
        for m in (full, shipped):
            m.load_state_dict(fixed.state_dict())
        with t.no_grad():
            ref, out, raw = (m(ids).logits for m in (full, fixed, shipped))
        ctx.close(out, ref, atol=1e-5, what=f"{cls}: logits with sliding_window cleared vs never set")
        diff = float((raw - ref).abs().max())
        ctx.note(f"{cls}: kept sliding_window={shipped.config.sliding_window} vs none, flag off: "
                 f"max logit difference {diff:.3g}")
        if windowed and diff < 1e-3:
            refute(ctx, f"{cls}: the record says this release windows the sdpa mask with "
                        f"use_sliding_window off, but the number changed nothing (max {diff:.3g})")
        if not windowed:
            ctx.close(raw, ref, atol=1e-5, what=f"{cls}: logits with sliding_window=4 vs None (flag off)")


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
