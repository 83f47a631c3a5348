"""On SM90 a block-sparse KV block must equal the kernel's tile_n (128 for head dim 128)."""

from verification.cases._common import TOL, fa4, first, qkv, ref_attention
from verification.cases.fa4 import _sparse

REQUIRES = {"cuda": True, "arch": "sm90", "packages": ["flash_attn.cute"]}
TIMEOUT = 600
S = 512


def _all_blocks(ctx, bq, bkv):
    return _sparse.all_blocks(ctx, S, bq, bkv)


def reproduce(ctx):
    q, k, v = qkv(ctx, sq=S, sk=S)
    ctx.expect_error(fa4().flash_attn_func, q, k, v, block_sparse_tensors=_all_blocks(ctx, 128, 256))


def fix_1(ctx):
    q, k, v = qkv(ctx, sq=S, sk=S)
    out = first(ctx.call(fa4().flash_attn_func, q, k, v, block_sparse_tensors=_all_blocks(ctx, 128, 128)))
    ctx.close(out, ref_attention(q, k, v), **TOL)


def control(ctx):
    q, k, v = qkv(ctx, sq=S, sk=S)
    out = first(ctx.call(fa4().flash_attn_func, q, k, v))
    ctx.close(out, ref_attention(q, k, v), **TOL)
