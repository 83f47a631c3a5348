"""Query heads must be a multiple of KV heads; (B, H, S, D) tensors passed as (B, S, H, D) break it."""

from verification.cases._common import TOL, fa4, first, qkv, ref_attention

REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flash_attn.cute"]}
TIMEOUT = 600


def reproduce(ctx):
    # SDPA layout (batch, heads, seqlen, dim): FA4 reads seqlen 96 as heads over 128 "KV heads"
    q, k, v = qkv(ctx, sq=96, sk=128, hq=4, hk=4, layout="bhsd")
    ctx.expect_error(fa4().flash_attn_func, q, k, v)


def fix_1(ctx):
    q, k, v = qkv(ctx, sq=96, sk=128, hq=4, hk=4, layout="bhsd")
    out = first(ctx.call(fa4().flash_attn_func, q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)))
    out = out.transpose(1, 2)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **TOL)


def control(ctx):
    q, k, v = qkv(ctx, hq=8, hk=2)
    out = first(ctx.call(fa4().flash_attn_func, q, k, v))
    ctx.close(out, ref_attention(q, k, v), **TOL)
