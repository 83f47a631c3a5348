"""FP8 attention is forward-only: inputs that require grad are refused before the arch check."""

from verification.cases._common import TOL, fa4, first, qkv, ref_attention

REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flash_attn.cute"]}
STEP_REQUIRES = {"fix_1": {"arch": "sm100-sm100"}}
TIMEOUT = 600


def reproduce(ctx):
    t = ctx.torch
    q, k, v = (x.to(t.float8_e4m3fn).requires_grad_() for x in qkv(ctx))
    ctx.expect_error(fa4().flash_attn_func, q, k, v)


def fix_1(ctx):
    t = ctx.torch
    q, k, v = (x.to(t.float8_e4m3fn) for x in qkv(ctx))
    with t.inference_mode():
        out = first(ctx.call(fa4().flash_attn_func, q, k, v))
    ctx.close(out, ref_attention(q, k, v), atol=6e-2, rtol=6e-2)


def fix_2(ctx):
    # "Train in bf16/fp16": the same call with bf16 tensors that require grad runs forward and backward
    q, k, v = qkv(ctx, requires_grad=True)
    out = first(ctx.call(fa4().flash_attn_func, q, k, v))
    ctx.call(out.float().sum().backward)
    ctx.close(out, ref_attention(q, k, v), **TOL)


def control(ctx):
    q, k, v = qkv(ctx)
    out = first(ctx.call(fa4().flash_attn_func, q, k, v))
    ctx.close(out, ref_attention(q, k, v), **TOL)
