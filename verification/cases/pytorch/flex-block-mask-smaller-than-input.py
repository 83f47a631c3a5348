"""A BlockMask built for shorter sequences than the inputs is refused."""

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
    bm = create_block_mask(causal, None, None, 128, 128, device=ctx.device)
    q, k, v = qkv(ctx, b=1, sq=256, sk=256, d=16, dtype=t.float32)
    ctx.expect_error(flex_attention, q, k, v, block_mask=bm)


def fix_1(ctx):
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    t = ctx.torch
    q, k, v = qkv(ctx, b=1, sq=256, sk=384, d=16, dtype=t.float32)
    bm = create_block_mask(causal, None, None, q.size(-2), k.size(-2), device=ctx.device)
    out = ctx.call(flex_attention, q, k, v, block_mask=bm)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", causal=True, causal_align="top_left"), **FP32)
