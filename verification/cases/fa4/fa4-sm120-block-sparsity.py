"""Block sparsity has no SM12x kernel."""

from verification.cases._common import fa4, qkv
from verification.cases.fa4 import _sparse

REQUIRES = {"cuda": True, "arch": "sm120+", "packages": ["flash_attn.cute"]}
TIMEOUT = 600


def reproduce(ctx):
    q, k, v = qkv(ctx, sq=512, sk=512)
    ctx.expect_error(fa4().flash_attn_func, q, k, v, block_sparse_tensors=_sparse.all_blocks(ctx, 512, 128, 128))
