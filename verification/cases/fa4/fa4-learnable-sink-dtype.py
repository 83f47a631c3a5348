"""learnable_sink must be fp16/bf16/fp32 (4.0.0b30+): float64 sinks are refused; cast them."""

from verification.cases._common import TOL, fa4, first, qkv, ref_attention

REQUIRES = {"cuda": True, "arch": "sm90", "packages": ["flash_attn.cute"]}
TIMEOUT = 600


def reproduce(ctx):
    t = ctx.torch
    q, k, v = qkv(ctx)
    sinks = t.randn(4, device=ctx.device, dtype=t.float64)
    ctx.expect_error(fa4().flash_attn_func, q, k, v, causal=True, learnable_sink=sinks)


def fix_1(ctx):
    t = ctx.torch
    q, k, v = qkv(ctx)
    sinks = t.randn(4, device=ctx.device, dtype=t.float64)
    out = first(ctx.call(fa4().flash_attn_func, q, k, v, causal=True, learnable_sink=sinks.to(t.bfloat16)))
    ctx.close(out, ref_attention(q, k, v, causal=True, sink=sinks.to(t.bfloat16)), **TOL)


def control(ctx):
    t = ctx.torch
    q, k, v = qkv(ctx)
    sinks = t.randn(4, device=ctx.device, dtype=t.float32)
    out = first(ctx.call(fa4().flash_attn_func, q, k, v, causal=True, learnable_sink=sinks))
    ctx.close(out, ref_attention(q, k, v, causal=True, sink=sinks), **TOL)
