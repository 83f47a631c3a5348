"""The SM100 head-dim-256 backward has no softcap."""

from verification.cases._common import fa4, first, qkv

REQUIRES = {"cuda": True, "arch": "sm100-sm110", "packages": ["flash_attn.cute"]}
TIMEOUT = 600


def reproduce(ctx):
    q, k, v = qkv(ctx, d=256, requires_grad=True)
    out = first(fa4().flash_attn_func(q, k, v, softcap=30.0))
    ctx.expect_error(out.float().sum().backward)
