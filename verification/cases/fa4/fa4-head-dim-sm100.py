"""On SM100/SM110 FA4 takes head dims 8..128, (192, 128), (256, 256) or the MLA shapes."""

from verification.cases._common import TOL, fa4, first, padded_head_dim_matches, qkv, ref_attention

REQUIRES = {"cuda": True, "arch": "sm100-sm110", "packages": ["flash_attn.cute"]}
TIMEOUT = 600


def reproduce(ctx):
    q, k, v = qkv(ctx, d=192)
    ctx.expect_error(fa4().flash_attn_func, q, k, v)


def fix_1(ctx):
    q, k, v = qkv(ctx, d=192)
    padded_head_dim_matches(ctx, q, k, v, 256)


def control(ctx):
    q, k, v = qkv(ctx, d=128)
    out = first(ctx.call(fa4().flash_attn_func, q, k, v))
    ctx.close(out, ref_attention(q, k, v), **TOL)
