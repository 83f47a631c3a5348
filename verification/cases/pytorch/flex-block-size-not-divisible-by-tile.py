"""Compiled FlexAttention needs the BlockMask block size to be a multiple of the kernel tile."""

from verification.cases._common import TOL, ref_attention
from verification.cases.pytorch._sdpa import causal, compiled_flex, qkv

BACKEND = "flex-attention"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["torch"]}
TIMEOUT = 600


def reproduce(ctx):
    from torch.nn.attention.flex_attention import create_block_mask

    q, k, v = qkv(ctx, b=1, sq=256, sk=256, d=64, dtype=ctx.torch.float16)
    bm16 = create_block_mask(causal, 1, None, 256, 256, device=ctx.device, BLOCK_SIZE=16)
    ctx.expect_error(compiled_flex(), q, k, v, block_mask=bm16)


def fix_1(ctx):
    from torch.nn.attention.flex_attention import create_block_mask

    q, k, v = qkv(ctx, b=1, sq=256, sk=256, d=64, dtype=ctx.torch.float16)
    bm = create_block_mask(causal, 1, None, 256, 256, device=ctx.device)
    out = ctx.call(compiled_flex(), q, k, v, block_mask=bm)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", causal=True, causal_align="top_left"), **TOL)


def fix_2(ctx):
    from torch.nn.attention.flex_attention import create_block_mask

    t = ctx.torch
    q, k, v = qkv(ctx, b=1, sq=256, sk=256, d=64, dtype=t.float16)
    bm16 = create_block_mask(causal, 1, None, 256, 256, device=ctx.device, BLOCK_SIZE=16)
    with t.no_grad():
        out = ctx.call(compiled_flex(), q, k, v, block_mask=bm16, kernel_options={"BLOCK_M": 16, "BLOCK_N": 16})
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", causal=True, causal_align="top_left"), **TOL)
