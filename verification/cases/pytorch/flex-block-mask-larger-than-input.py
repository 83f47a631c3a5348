"""A BlockMask built for longer sequences than the inputs is refused."""

from verification.cases.pytorch._sdpa import causal, causal_block_mask, close_causal, flex_qkv

BACKEND = "flex-attention"
REQUIRES = {"packages": ["torch"], "cpu": True}


def reproduce(ctx):
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    bm = create_block_mask(causal, 1, None, 512, 512, device=ctx.device)
    q, k, v = flex_qkv(ctx, sq=256, sk=256)
    ctx.expect_error(flex_attention, q, k, v, block_mask=bm)


def fix_1(ctx):
    from torch.nn.attention.flex_attention import flex_attention

    q, k, v = flex_qkv(ctx, sq=256, sk=256)
    out = ctx.call(flex_attention, q, k, v, block_mask=causal_block_mask(ctx, q, k, batch=1))
    close_causal(ctx, out, q, k, v)


def fix_2(ctx):
    from torch.nn.attention.flex_attention import BlockMask, flex_attention

    t = ctx.torch
    q, k, v = flex_qkv(ctx, sq=200, sk=200)  # not a multiple of 128: two blocks cover it
    kv_num_blocks = t.tensor([[[1, 2]]], dtype=t.int32, device=ctx.device)
    kv_indices = t.tensor([[[[0, 1], [0, 1]]]], dtype=t.int32, device=ctx.device)
    bm = BlockMask.from_kv_blocks(kv_num_blocks, kv_indices, mask_mod=causal, seq_lengths=(q.size(-2), k.size(-2)))
    out = ctx.call(flex_attention, q, k, v, block_mask=bm)
    close_causal(ctx, out, q, k, v)
