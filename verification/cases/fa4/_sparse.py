"""Block-sparse metadata that lists every KV block as full (dense attention via the sparse path)."""


def all_blocks(ctx, s, bq, bkv, b=2, h=4):
    from flash_attn.cute.block_sparsity import BlockSparseTensorsTorch

    t = ctx.torch
    m, n = s // bq, s // bkv
    idx = t.arange(n, dtype=t.int32, device=ctx.device).expand(b, h, m, n).contiguous()
    return BlockSparseTensorsTorch(mask_block_cnt=t.zeros(b, h, m, dtype=t.int32, device=ctx.device),
                                   mask_block_idx=t.zeros_like(idx),
                                   full_block_cnt=t.full((b, h, m), n, dtype=t.int32, device=ctx.device),
                                   full_block_idx=idx, block_size=(bq, bkv))
