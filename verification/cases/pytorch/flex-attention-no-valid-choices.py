"""Compiled FlexAttention's backward with a BlockMask finer than every backward tile: Inductor has
no Triton configuration left for flex_attention_backward and raises NoValidChoicesError (the
forward is given 16-wide tiles through kernel_options, so it compiles; see
flex-block-size-not-divisible-by-tile for the forward's own refusal)."""

from verification.cases._common import TOL, ref_attention
from verification.cases.pytorch._sdpa import causal, compiled_flex, qkv

BACKEND = "flex-attention"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["torch"]}
TIMEOUT = 600


def _train_step(ctx, block_size, kernel_options=None):
    from torch.nn.attention.flex_attention import create_block_mask

    t = ctx.torch
    q, k, v = (x.requires_grad_() for x in qkv(ctx, b=1, sq=256, sk=256, d=64, dtype=t.float16))
    bm = create_block_mask(causal, 1, None, 256, 256, device=ctx.device, BLOCK_SIZE=block_size)
    out = compiled_flex()(q, k, v, block_mask=bm, kernel_options=kernel_options)
    out.sum().backward()
    return out.detach(), (q, k, v)


def reproduce(ctx):
    ctx.expect_error(_train_step, ctx, 16, {"BLOCK_M": 16, "BLOCK_N": 16})


def fix_1(ctx):
    out, (q, k, v) = ctx.call(_train_step, ctx, 128)
    ctx.close(out, ref_attention(q.detach(), k.detach(), v.detach(), layout="bhsd", causal=True,
                                 causal_align="top_left"), **TOL)
