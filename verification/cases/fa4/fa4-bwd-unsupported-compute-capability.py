"""FA4's backward has no SM8x kernel: differentiating through it on 8.x fails."""

from verification.cases._common import TOL, fa4, first, qkv, ref_attention

REQUIRES = {"cuda": True, "arch": "sm80-sm89", "packages": ["flash_attn.cute"]}
TIMEOUT = 600


def reproduce(ctx):
    q, k, v = qkv(ctx, requires_grad=True)
    out = first(fa4().flash_attn_func(q, k, v, causal=True))
    ctx.expect_error(out.float().sum().backward)


def fix_2(ctx):
    q, k, v = qkv(ctx)
    with ctx.torch.inference_mode():
        out = first(ctx.call(fa4().flash_attn_func, q, k, v))
    ctx.close(out, ref_attention(q, k, v), **TOL)
