"""SGLang's vendored FA4 on SM90 cannot combine a relative (sheared) bias with block sparsity."""

from verification.cases._common import randn

BACKEND = "sglang"
REQUIRES = {"cuda": True, "arch": "sm90", "packages": ["sglang.kernels.ops.attention.flash_attn.cute"]}
TIMEOUT = 600
S = 256


def reproduce(ctx):
    from sglang.kernels.ops.attention.flash_attn.cute import interface
    from sglang.kernels.ops.attention.flash_attn.cute.block_sparsity import BlockSparseTensorsTorch

    t = ctx.torch
    b, h, d = 1, 4, 128
    q, k, v = randn(ctx, b, S, h, d), randn(ctx, b, S, h, d), randn(ctx, b, S, h, d)
    rel_bias = randn(ctx, b, S, h, 128)
    m = n = S // 128
    bst = BlockSparseTensorsTorch(
        mask_block_cnt=t.zeros(b, h, m, dtype=t.int32, device=ctx.device),
        mask_block_idx=t.zeros(b, h, m, n, dtype=t.int32, device=ctx.device),
        full_block_cnt=t.full((b, h, m), n, dtype=t.int32, device=ctx.device),
        full_block_idx=t.arange(n, dtype=t.int32, device=ctx.device).expand(b, h, m, n).contiguous(),
        block_size=(128, 128),  # the 128x128 tiles the SM90 kernel uses with a sheared bias
    )
    ctx.expect_error(interface.flash_attn_varlen_func, q, k, v, causal=True, rel_bias=rel_bias,
                     block_sparse_tensors=bst)
