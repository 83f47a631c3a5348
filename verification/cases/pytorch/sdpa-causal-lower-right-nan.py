"""causal_lower_right(L, S) with L > S warns that rows will be NaN."""

from verification.cases._common import ref_attention
from verification.cases.pytorch._sdpa import FP32, qkv, sdpa

BACKEND = "sdpa"
REQUIRES = {"packages": ["torch"]}


def reproduce(ctx):
    from torch.nn.attention.bias import causal_lower_right

    ctx.expect_warning(causal_lower_right, 8, 4)


def fix_1(ctx):
    from torch.nn.attention.bias import causal_lower_right

    t = ctx.torch
    q, k, v = qkv(ctx, sq=4, sk=8, d=32, dtype=t.float32)
    bias = ctx.call(causal_lower_right, q.size(-2), k.size(-2))
    out = ctx.call(sdpa, q, k, v, attn_mask=bias)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", causal=True, causal_align="bottom_right"), **FP32)


def fix_2(ctx):
    from torch.nn.attention.bias import causal_upper_left

    t = ctx.torch
    q, k, v = qkv(ctx, sq=8, sk=4, d=32, dtype=t.float32)
    bias = ctx.call(causal_upper_left, 8, 4)
    out = ctx.call(sdpa, q, k, v, attn_mask=bias)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", causal=True, causal_align="top_left"), **FP32)
