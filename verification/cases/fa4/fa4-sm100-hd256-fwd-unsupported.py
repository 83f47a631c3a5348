"""flash-attn-4 4.0.0b20/b30 (and SGLang's copy): the SM100 head-dim-256 forward has no seqused."""

from verification.cases._common import fa4, first, randn

REQUIRES = {"cuda": True, "arch": "sm100-sm110", "packages": ["flash_attn.cute"]}
TIMEOUT = 600


def reproduce(ctx):
    from importlib import metadata

    t = ctx.torch
    version = metadata.version("flash-attn-4")
    if not version.startswith(("4.0.0b20", "4.0.0b30")):
        ctx.skip(f"needs flash-attn-4 4.0.0b20 or b30 (this is {version}; b36 lifted the limit)")
    q, k, v = randn(ctx, 2, 128, 4, 256), randn(ctx, 2, 128, 4, 256), randn(ctx, 2, 128, 4, 256)
    used = t.tensor([100, 128], dtype=t.int32, device=ctx.device)
    ctx.expect_error(lambda: first(fa4().flash_attn_varlen_func(q, k, v, seqused_k=used)))
