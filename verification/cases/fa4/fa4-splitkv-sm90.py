"""FA4 on SM90 refuses split-KV: explicit num_splits > 1, and automatic mode on a decode shape."""

from verification.cases._common import TOL, fa4, first, qkv, ref_attention

REQUIRES = {"cuda": True, "arch": "sm90", "packages": ["flash_attn.cute"]}
TIMEOUT = 600


def reproduce(ctx):
    q, k, v = qkv(ctx, b=2, sq=128, sk=1024)
    ctx.expect_error(fa4().flash_attn_func, q, k, v, num_splits=2)
    ctx.note("num_splits=2 raised as recorded; now num_splits=0 on a decode shape")
    # automatic mode: batch 1, one query token, 8k keys -> the heuristic picks several splits
    q, k, v = qkv(ctx, b=1, sq=1, sk=8192, hq=8, hk=1)
    ctx.expect_error(fa4().flash_attn_func, q, k, v, num_splits=0)


def fix_1(ctx):
    q, k, v = qkv(ctx, b=1, sq=1, sk=8192, hq=8, hk=1)
    major, _ = ctx.torch.cuda.get_device_capability()
    out = first(ctx.call(fa4().flash_attn_func, q, k, v, num_splits=0 if major in (10, 11) else 1))
    ctx.close(out, ref_attention(q, k, v), **TOL)


def control(ctx):
    q, k, v = qkv(ctx, b=2, sq=128, sk=1024)
    out = first(ctx.call(fa4().flash_attn_func, q, k, v, num_splits=1))
    ctx.close(out, ref_attention(q, k, v), **TOL)
