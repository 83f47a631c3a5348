"""enable_gqa needs query heads to be a multiple of KV heads; (B, L, H, D) tensors break it."""

from verification.cases._common import ref_attention
from verification.cases.pytorch._sdpa import FP32, qkv

BACKEND = "flex-attention"
REQUIRES = {"packages": ["torch"], "cpu": True}


def _blhd(ctx):
    t = ctx.torch
    return qkv(ctx, b=1, sq=96, sk=128, hq=8, hk=2, d=16, dtype=t.float32, layout="bshd")


def reproduce(ctx):
    from torch.nn.attention.flex_attention import flex_attention

    q, k, v = _blhd(ctx)  # read as heads 96 over 128
    ctx.expect_error(flex_attention, q, k, v, enable_gqa=True)


def fix_1(ctx):
    from torch.nn.attention.flex_attention import flex_attention

    q, k, v = _blhd(ctx)
    out = ctx.call(flex_attention, q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), enable_gqa=True)
    ctx.close(out.transpose(1, 2), ref_attention(q, k, v, layout="bshd"), **FP32)
