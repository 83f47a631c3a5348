"""The SM12x forward runs one split only."""

from verification.cases._common import TOL, fa4, first, qkv, ref_attention

REQUIRES = {"cuda": True, "arch": "sm120+", "packages": ["flash_attn.cute"]}
TIMEOUT = 600


def reproduce(ctx):
    q, k, v = qkv(ctx, sk=1024)
    ctx.expect_error(fa4().flash_attn_func, q, k, v, num_splits=2)


def fix_1(ctx):
    q, k, v = qkv(ctx, sk=1024)
    out = first(ctx.call(fa4().flash_attn_func, q, k, v, num_splits=1))
    ctx.close(out, ref_attention(q, k, v), **TOL)
