"""A custom score_mod has no SM8x kernel; softcap does."""

from verification.cases._common import TOL, fa4, first, qkv, ref_attention

REQUIRES = {"cuda": True, "arch": "sm80-sm89", "packages": ["flash_attn.cute"]}
TIMEOUT = 600


def reproduce(ctx):
    from flash_attn.cute import utils

    q, k, v = qkv(ctx)
    ctx.expect_error(fa4().flash_attn_func, q, k, v, score_mod=utils.create_softcap_scoremod(50.0))


def fix_1(ctx):
    q, k, v = qkv(ctx)
    out = first(ctx.call(fa4().flash_attn_func, q, k, v, softcap=50.0))
    ctx.close(out, ref_attention(q, k, v, softcap=50.0), **TOL)
