"""A preallocated out/lse/descale buffer must have exactly the dtype and shape FA4 expects."""

from verification.cases._common import TOL, fa4, first, qkv, ref_attention

REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flash_attn.cute"]}
TIMEOUT = 600


def reproduce(ctx):
    t = ctx.torch
    q, k, v = qkv(ctx)
    out = t.empty(*q.shape[:-1], v.shape[-1], dtype=t.float32, device=ctx.device)  # fp32 instead of bf16
    ctx.expect_error(fa4()._flash_attn_fwd, q, k, v, out=out)


def fix_1(ctx):
    # bf16 inputs: out in the input dtype, last dim head_dim_v (the record's FP8 variant needs SM100)
    t = ctx.torch
    q, k, v = qkv(ctx, d=128, dv=64)
    out = t.empty(*q.shape[:-1], v.shape[-1], dtype=q.dtype, device=ctx.device)
    ctx.call(fa4()._flash_attn_fwd, q, k, v, out=out)
    ctx.close(out, ref_attention(q, k, v), **TOL)


def control(ctx):
    q, k, v = qkv(ctx)
    out = first(ctx.call(fa4()._flash_attn_fwd, q, k, v))
    ctx.close(out, ref_attention(q, k, v), **TOL)
