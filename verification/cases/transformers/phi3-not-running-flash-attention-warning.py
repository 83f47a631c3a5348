"""Phi-3's eager attention logs "You are not running the flash-attention implementation, expect
numerical differences." (transformers 4.41 to 4.47; gone from 4.48). A tiny Phi-3 made in code runs
one forward pass; the line goes through transformers' logger (warning_once)."""

import logging

from verification.cases.transformers._tf import fresh_once, needs, refute, version

BACKEND = "transformers"
REQUIRES = {"packages": ["transformers", "torch"]}
STEP_REQUIRES = {"fix_2": {"cuda": True, "arch": "sm80+", "packages": ["flash_attn"]}}

LOGGER = "transformers"


def tiny_phi3():
    from transformers import Phi3Config

    return Phi3Config(hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=2,
                      num_hidden_layers=2, vocab_size=128, max_position_embeddings=256, pad_token_id=0)


def forward(**kwargs):
    def run():
        import torch
        from transformers import AutoModelForCausalLM

        model = AutoModelForCausalLM.from_config(tiny_phi3(), **kwargs)
        with torch.no_grad():
            model(torch.tensor([[1, 2, 3, 4, 5]]))
        return model
    return run


def reproduce(ctx):
    needs(ctx, low="4.41", below="4.48", why="the releases whose Phi3Attention prints it")
    fresh_once()
    # 4.41-4.44: no attn_implementation gives eager (Phi-3 has no SDPA path); from 4.45 ask for it.
    kwargs = {} if version() < (4, 45) else {"attn_implementation": "eager"}
    ctx.note(f"AutoModelForCausalLM.from_config(tiny Phi3Config, {kwargs}) and one forward pass")
    _, model = ctx.expect_logged(LOGGER, forward(**kwargs))
    ctx.note(f"attention: {model.config._attn_implementation!r}")


def fix_2(ctx):
    # FlashAttention-2: needs flash_attn on an sm80+ GPU (STEP_REQUIRES).
    fresh_once()
    ctx.not_logged(LOGGER, forward(attn_implementation="flash_attention_2"))


def fix_3(ctx):
    # From 4.45 Phi-3 has SDPA: asking for it runs without the line.
    needs(ctx, low="4.45", why="Phi-3 is refused SDPA before it")
    fresh_once()
    model = ctx.not_logged(LOGGER, forward(attn_implementation="sdpa"))
    ctx.note(f"attention: {model.config._attn_implementation!r}")


def fix_4(ctx):
    # transformers' verbosity at error hides it. Looked for with a handler that leaves the levels
    # alone (expect_logged/not_logged lower them to DEBUG, which would undo the fix).
    needs(ctx, low="4.41", below="4.48", why="the releases that print it")
    from transformers.utils import logging as tf_logging

    from errkb.verify.case import match_message

    kwargs = {} if version() < (4, 45) else {"attn_implementation": "eager"}
    kept = []

    class Keep(logging.Handler):
        def emit(self, record):
            kept.append(record.getMessage())

    handler, before = Keep(logging.DEBUG), tf_logging.get_verbosity()
    logging.getLogger(LOGGER).addHandler(handler)
    try:
        fresh_once()
        tf_logging.set_verbosity_warning()
        ctx.call(forward(**kwargs))
        shown = any(match_message(ctx.record["template"], m) for m in kept)
        kept.clear()
        fresh_once()
        tf_logging.set_verbosity_error()
        ctx.call(forward(**kwargs))
        hidden = not any(match_message(ctx.record["template"], m) for m in kept)
    finally:
        logging.getLogger(LOGGER).removeHandler(handler)
        tf_logging.set_verbosity(before)
    ctx.note(f"at warning verbosity the line reaches handlers: {shown}; at error: {not hidden}")
    if not shown:
        refute(ctx, "the line was not logged even at warning verbosity (control of this step)")
    if not hidden:
        refute(ctx, "set_verbosity_error() did not hide the line")
