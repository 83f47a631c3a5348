"""Compiled FlexAttention on GPU needs head dims of at least 16; pad and keep the scale."""

from verification.cases._common import TOL, ref_attention
from verification.cases.pytorch._sdpa import compiled_flex, qkv, sdpa

BACKEND = "flex-attention"
REQUIRES = {"cuda": True, "packages": ["torch"]}
TIMEOUT = 600


def reproduce(ctx):
    q, k, v = qkv(ctx, b=1, d=8)
    ctx.expect_error(compiled_flex(), q, k, v)


def fix_1(ctx):
    F = ctx.torch.nn.functional
    q, k, v = qkv(ctx, b=1, d=8)
    d = q.size(-1)
    qp, kp, vp = (F.pad(t, (0, 16 - d)) for t in (q, k, v))
    out = ctx.call(compiled_flex(), qp, kp, vp, scale=d ** -0.5)[..., :d]
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **TOL)


def fix_2(ctx):
    t = ctx.torch
    q, k, v = qkv(ctx, b=1, d=8)
    dense = t.ones(q.size(-2), k.size(-2), dtype=t.bool, device=ctx.device).tril()
    out = ctx.call(sdpa, q, k, v, attn_mask=dense)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", mask=dense), **TOL)
