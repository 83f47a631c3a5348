"""The SM8x and SM12x forward kernels have no learnable sink."""

from verification.cases._common import TOL, fa4, qkv, ref_attention

REQUIRES = {"cuda": True, "arch": ["sm80-sm89", "sm120+"], "packages": ["flash_attn.cute"]}
TIMEOUT = 600


def reproduce(ctx):
    t = ctx.torch
    q, k, v = qkv(ctx)
    ctx.expect_error(fa4().flash_attn_func, q, k, v, causal=True,
                     learnable_sink=t.randn(4, device=ctx.device, dtype=t.bfloat16))


def fix_1(ctx):
    t = ctx.torch
    q, k, v = qkv(ctx)
    sinks = t.randn(4, device=ctx.device, dtype=t.bfloat16)
    out, lse = ctx.call(fa4().flash_attn_func, q, k, v, causal=True, return_lse=True)
    scale = t.sigmoid(lse - sinks.float()[None, :, None]).transpose(1, 2).unsqueeze(-1)
    out = out * scale.to(out.dtype)
    ctx.close(out, ref_attention(q, k, v, causal=True, sink=sinks), **TOL)
