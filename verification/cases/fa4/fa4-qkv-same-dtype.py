"""q, k, v must share a dtype (bf16 q with an fp16 cache is refused); cast the odd one."""

from verification.cases._common import TOL, fa4, first, qkv, ref_attention

REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flash_attn.cute"]}
TIMEOUT = 600


def reproduce(ctx):
    t = ctx.torch
    q, k, v = qkv(ctx)
    ctx.expect_error(fa4().flash_attn_func, q, k.to(t.float16), v.to(t.float16))


def fix_1(ctx):
    t = ctx.torch
    q, k, v = qkv(ctx)
    k16, v16 = k.to(t.float16), v.to(t.float16)
    out = first(ctx.call(fa4().flash_attn_func, q, k16.to(q.dtype), v16.to(q.dtype)))
    ctx.close(out, ref_attention(q, k16, v16), **TOL)


def control(ctx):
    q, k, v = qkv(ctx)
    out = first(ctx.call(fa4().flash_attn_func, q, k, v))
    ctx.close(out, ref_attention(q, k, v), **TOL)
