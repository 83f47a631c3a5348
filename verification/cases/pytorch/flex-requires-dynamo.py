"""flex_attention outside torch.compile needs Dynamo support in this interpreter."""

from verification.cases._common import ref_attention
from verification.cases.pytorch._sdpa import qkv, sdpa

BACKEND = "flex-attention"
REQUIRES = {"packages": ["torch"], "cpu": True}
FP32 = {"atol": 1e-4, "rtol": 1e-4}


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def reproduce(ctx):
    if ctx.torch._dynamo.is_dynamo_supported():
        ctx.skip("needs an interpreter without Dynamo support (this one has it)")
    from torch.nn.attention.flex_attention import flex_attention

    q, k, v = qkv(ctx, b=1, d=16, dtype=ctx.torch.float32)
    ctx.expect_error(flex_attention, q, k, v)


def fix_2(ctx):
    from torch.nn.attention.flex_attention import create_block_mask, create_mask, flex_attention

    t = ctx.torch
    q, k, v = qkv(ctx, b=1, d=16, dtype=t.float32)
    if t._dynamo.is_dynamo_supported():
        bm = create_block_mask(causal, None, None, q.size(-2), k.size(-2), device=ctx.device)
        out = ctx.call(flex_attention, q, k, v, block_mask=bm)
    else:
        dense = create_mask(causal, 1, 1, q.size(-2), k.size(-2), device=q.device)
        out = ctx.call(sdpa, q, k, v, attn_mask=dense)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", causal=True, causal_align="top_left"), **FP32)
