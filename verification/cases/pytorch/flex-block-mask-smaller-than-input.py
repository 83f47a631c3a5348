"""A BlockMask built for shorter sequences than the inputs is refused."""

from verification.cases.pytorch._sdpa import causal, causal_block_mask, close_causal, flex_qkv

BACKEND = "flex-attention"
REQUIRES = {"packages": ["torch"], "cpu": True}


def reproduce(ctx):
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    bm = create_block_mask(causal, None, None, 128, 128, device=ctx.device)
    q, k, v = flex_qkv(ctx, sq=256, sk=256)
    ctx.expect_error(flex_attention, q, k, v, block_mask=bm)


def fix_1(ctx):
    from torch.nn.attention.flex_attention import flex_attention

    q, k, v = flex_qkv(ctx, sq=256, sk=384)
    out = ctx.call(flex_attention, q, k, v, block_mask=causal_block_mask(ctx, q, k))
    close_causal(ctx, out, q, k, v)
