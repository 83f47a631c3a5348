"""FP8 q/k/v run only on SM100 in FA4 CuTe; elsewhere keep bf16 (or dequantize first)."""

from verification.cases._common import TOL, fa4, first, qkv, ref_attention

REQUIRES = {"cuda": True, "arch": ["sm80-sm90", "sm110+"], "packages": ["flash_attn.cute"]}
TIMEOUT = 600


def reproduce(ctx):
    t = ctx.torch
    q, k, v = qkv(ctx)
    ctx.expect_error(fa4().flash_attn_func, q.to(t.float8_e4m3fn), k.to(t.float8_e4m3fn), v.to(t.float8_e4m3fn))


def fix_3(ctx):
    # "Dequantize before calling FA4": an FP8 cache turned back into bf16 runs
    t = ctx.torch
    q, k, v = qkv(ctx)
    k8, v8 = k.to(t.float8_e4m3fn), v.to(t.float8_e4m3fn)
    kd, vd = k8.to(t.bfloat16), v8.to(t.bfloat16)
    out = first(ctx.call(fa4().flash_attn_func, q, kd, vd))
    ctx.close(out, ref_attention(q, kd, vd), **TOL)


def control(ctx):
    q, k, v = qkv(ctx)
    out = first(ctx.call(fa4().flash_attn_func, q, k, v))
    ctx.close(out, ref_attention(q, k, v), **TOL)
