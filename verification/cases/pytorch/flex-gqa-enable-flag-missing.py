"""FlexAttention needs enable_gqa=True when query and key/value head counts differ."""

from verification.cases._common import ref_attention
from verification.cases.pytorch._sdpa import FP32, qkv

BACKEND = "flex-attention"
REQUIRES = {"packages": ["torch"], "cpu": True}


def reproduce(ctx):
    from torch.nn.attention.flex_attention import flex_attention

    t = ctx.torch
    q, k, v = qkv(ctx, b=1, hq=8, hk=2, d=16, dtype=t.float32)
    ctx.expect_error(flex_attention, q, k, v)


def fix_1(ctx):
    from torch.nn.attention.flex_attention import flex_attention

    t = ctx.torch
    q, k, v = qkv(ctx, b=1, hq=8, hk=2, d=16, dtype=t.float32)
    out = ctx.call(flex_attention, q, k, v, enable_gqa=True)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **FP32)
