"""The math kernel refuses an explicit attn_mask together with is_causal=True."""

from verification.cases._common import ref_attention
from verification.cases.pytorch._sdpa import FP32, in_backends, qkv, sdpa

BACKEND = "sdpa"
REQUIRES = {"packages": ["torch"]}  # runs on the CPU too


def _inputs(ctx):
    t = ctx.torch
    q, k, v = qkv(ctx, b=2, sq=16, sk=16, d=32, dtype=t.float32)
    pad = t.ones(16, 16, dtype=t.bool, device=ctx.device)
    pad[:, 12:] = False
    return q, k, v, pad


def reproduce(ctx):
    q, k, v, pad = _inputs(ctx)
    ctx.expect_error(in_backends, ["MATH"], sdpa, q, k, v, attn_mask=pad, is_causal=True)


def fix_1(ctx):
    t = ctx.torch
    q, k, v, pad = _inputs(ctx)
    L, S = q.size(-2), k.size(-2)
    causal = t.ones(L, S, dtype=t.bool, device=q.device).tril()
    out = ctx.call(in_backends, ["MATH"], sdpa, q, k, v, attn_mask=pad & causal, is_causal=False)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", mask=pad & causal), **FP32)


def fix_2(ctx):
    q, k, v, _ = _inputs(ctx)
    out = ctx.call(in_backends, ["MATH"], sdpa, q, k, v, is_causal=True)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", causal=True, causal_align="top_left"), **FP32)


def control(ctx):
    q, k, v, pad = _inputs(ctx)
    out = ctx.call(in_backends, ["MATH"], sdpa, q, k, v, attn_mask=pad)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", mask=pad), **FP32)
