"""FA4 on SM90 accepts head dims 8..256 divisible by 8 (bf16); pad others and keep the scale."""

from verification.cases._common import TOL, fa4, first, padded_head_dim_matches, qkv, ref_attention

REQUIRES = {"cuda": True, "arch": "sm90", "packages": ["flash_attn.cute"]}
TIMEOUT = 600


def reproduce(ctx):
    q, k, v = qkv(ctx, d=60)
    ctx.expect_error(fa4().flash_attn_func, q, k, v)
    ctx.note("head_dim 60 raised as recorded; now head_dim 320")
    q, k, v = qkv(ctx, d=320)
    ctx.expect_error(fa4().flash_attn_func, q, k, v)


def fix_1(ctx):
    q, k, v = qkv(ctx, d=60)
    padded_head_dim_matches(ctx, q, k, v, 64)  # the next multiple of 8


def control(ctx):
    q, k, v = qkv(ctx, d=64)
    out = first(ctx.call(fa4().flash_attn_func, q, k, v))
    ctx.close(out, ref_attention(q, k, v), **TOL)
