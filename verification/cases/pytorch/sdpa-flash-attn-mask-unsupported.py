"""Flash SDPA has no attn_mask: forcing flash with a mask prints this reason."""

from verification.cases._common import TOL, ref_attention
from verification.cases.pytorch._sdpa import in_backends, qkv, sdpa

BACKEND = "sdpa"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["torch"]}


def _mask(ctx):
    t = ctx.torch
    m = t.ones(128, 128, dtype=t.bool, device=ctx.device)
    m[:, 100:] = False
    return m


def reproduce(ctx):
    q, k, v = qkv(ctx)
    ctx.expect_warning(in_backends, ["FLASH_ATTENTION"], sdpa, q, k, v, attn_mask=_mask(ctx))


def fix_1(ctx):
    q, k, v = qkv(ctx)
    out = ctx.call(in_backends, ["FLASH_ATTENTION"], sdpa, q, k, v, is_causal=True)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", causal=True, causal_align="top_left"), **TOL)


def fix_2(ctx):
    q, k, v = qkv(ctx)
    m = _mask(ctx)
    out = ctx.call(in_backends, ["FLASH_ATTENTION", "EFFICIENT_ATTENTION"], sdpa, q, k, v, attn_mask=m)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", mask=m), **TOL)
