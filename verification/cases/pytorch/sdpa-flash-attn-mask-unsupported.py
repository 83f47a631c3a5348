"""Flash SDPA has no attn_mask: forcing flash with a mask prints this reason."""

from verification.cases._common import TOL, ref_attention
from verification.cases.pytorch._sdpa import in_backends, padding_mask, qkv, sdpa

BACKEND = "sdpa"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["torch"]}



def reproduce(ctx):
    q, k, v = qkv(ctx)
    ctx.expect_warning(in_backends, ["FLASH_ATTENTION"], sdpa, q, k, v, attn_mask=padding_mask(ctx))


def fix_1(ctx):
    q, k, v = qkv(ctx)
    out = ctx.call(in_backends, ["FLASH_ATTENTION"], sdpa, q, k, v, is_causal=True)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", causal=True, causal_align="top_left"), **TOL)


def fix_2(ctx):
    q, k, v = qkv(ctx)
    m = padding_mask(ctx)
    out = ctx.call(in_backends, ["FLASH_ATTENTION", "EFFICIENT_ATTENTION"], sdpa, q, k, v, attn_mask=m)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", mask=m), **TOL)
