"""A BlockMask on another device than q/k/v is refused."""

from verification.cases._common import TOL, ref_attention
from verification.cases.pytorch._sdpa import causal, qkv

BACKEND = "flex-attention"
REQUIRES = {"cuda": True, "packages": ["torch"]}


def reproduce(ctx):
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    q, k, v = qkv(ctx, b=1, sq=256, sk=256, d=64)
    bm = create_block_mask(causal, 1, None, 256, 256, device="cpu")
    ctx.expect_error(flex_attention, q, k, v, block_mask=bm)


def fix_1(ctx):
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    q, k, v = qkv(ctx, b=1, sq=256, sk=256, d=64)
    bm = create_block_mask(causal, 1, None, 256, 256, device=q.device)
    out = ctx.call(flex_attention, q, k, v, block_mask=bm)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", causal=True, causal_align="top_left"), **TOL)


def fix_2(ctx):
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    q, k, v = qkv(ctx, b=1, sq=256, sk=256, d=64)
    bm = create_block_mask(causal, 1, None, 256, 256, device="cpu")
    out = ctx.call(flex_attention, q, k, v, block_mask=bm.to(q.device))
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", causal=True, causal_align="top_left"), **TOL)
