"""A BlockMask built for longer sequences than the inputs is refused."""

from verification.cases._common import ref_attention
from verification.cases.pytorch._sdpa import qkv

BACKEND = "flex-attention"
REQUIRES = {"packages": ["torch"], "cpu": True}
FP32 = {"atol": 1e-4, "rtol": 1e-4}


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def reproduce(ctx):
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    t = ctx.torch
    bm = create_block_mask(causal, 1, None, 512, 512, device=ctx.device)
    q, k, v = qkv(ctx, b=1, sq=256, sk=256, d=16, dtype=t.float32)
    ctx.expect_error(flex_attention, q, k, v, block_mask=bm)


def fix_1(ctx):
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    t = ctx.torch
    q, k, v = qkv(ctx, b=1, sq=256, sk=256, d=16, dtype=t.float32)
    bm = create_block_mask(causal, 1, None, q.size(-2), k.size(-2), device=ctx.device)
    out = ctx.call(flex_attention, q, k, v, block_mask=bm)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", causal=True, causal_align="top_left"), **FP32)


def fix_2(ctx):
    from torch.nn.attention.flex_attention import BlockMask, flex_attention

    t = ctx.torch
    q, k, v = qkv(ctx, b=1, sq=200, sk=200, d=16, dtype=t.float32)  # not a multiple of 128
    nq = 2  # blocks of 128 covering 200
    kv_num_blocks = t.tensor([[[1, 2]]], dtype=t.int32, device=ctx.device)
    kv_indices = t.tensor([[[[0, 1], [0, 1]]]], dtype=t.int32, device=ctx.device)
    bm = BlockMask.from_kv_blocks(kv_num_blocks, kv_indices, mask_mod=causal, seq_lengths=(q.size(-2), k.size(-2)))
    del nq
    out = ctx.call(flex_attention, q, k, v, block_mask=bm)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", causal=True, causal_align="top_left"), **FP32)
