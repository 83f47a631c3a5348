"""Fused SDPA kernels need equal head counts unless enable_gqa=True (flash only)."""

from verification.cases._common import TOL, ref_attention
from verification.cases.pytorch._sdpa import in_backends, qkv, sdpa

BACKEND = "sdpa"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["torch"]}


def reproduce(ctx):
    q, k, v = qkv(ctx, hq=8, hk=2)
    ctx.expect_warning(in_backends, ["FLASH_ATTENTION", "EFFICIENT_ATTENTION"], sdpa, q, k, v, is_causal=True)


def fix_1(ctx):
    q, k, v = qkv(ctx, hq=8, hk=2)
    out = ctx.call(in_backends, ["FLASH_ATTENTION", "EFFICIENT_ATTENTION"], sdpa, q, k, v, is_causal=True,
                   enable_gqa=True)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", causal=True, causal_align="top_left"), **TOL)


def fix_2(ctx):
    q, k, v = qkv(ctx, hq=8, hk=2)
    g = q.size(1) // k.size(1)
    out = ctx.call(in_backends, ["FLASH_ATTENTION", "EFFICIENT_ATTENTION"], sdpa, q, k.repeat_interleave(g, dim=1),
                   v.repeat_interleave(g, dim=1))
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **TOL)


def fix_3(ctx):
    q, _, _ = qkv(ctx, b=3)
    _, k, v = qkv(ctx, b=1)
    B = q.size(0)
    out = ctx.call(in_backends, ["FLASH_ATTENTION"], sdpa, q, k.expand(B, -1, -1, -1), v.expand(B, -1, -1, -1))
    ctx.close(out, ref_attention(q, k.expand(B, -1, -1, -1), v.expand(B, -1, -1, -1), layout="bhsd"), **TOL)
