"""FlexAttention has no CPU backward: CPU inputs that require grad are refused up front."""

from verification.cases._common import ref_attention
from verification.cases.pytorch._sdpa import qkv, sdpa

BACKEND = "flex-attention"
REQUIRES = {"packages": ["torch"], "cpu": True}
FP32 = {"atol": 1e-4, "rtol": 1e-4}


def _mask_mod(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def reproduce(ctx):
    from torch.nn.attention.flex_attention import flex_attention

    t = ctx.torch
    q, k, v = qkv(ctx, b=1, sq=128, sk=128, d=16, dtype=t.float32, requires_grad=True)
    ctx.expect_error(flex_attention, q, k, v)


def fix_1(ctx):
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    t = ctx.torch
    q, k, v = qkv(ctx, b=1, sq=128, sk=128, d=16, dtype=t.float32, requires_grad=True)
    bm = create_block_mask(_mask_mod, 1, 1, 128, 128, device="cpu")
    with t.inference_mode():
        out = ctx.call(flex_attention, q.detach(), k.detach(), v.detach(), block_mask=bm)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", causal=True, causal_align="top_left"), **FP32)


def fix_2(ctx):
    from torch.nn.attention.flex_attention import create_mask

    t = ctx.torch
    q, k, v = qkv(ctx, b=1, sq=128, sk=128, d=16, dtype=t.float32, requires_grad=True)
    dense = create_mask(_mask_mod, 1, 1, q.size(-2), k.size(-2), device="cpu")
    out = ctx.call(sdpa, q, k, v, attn_mask=dense)
    ctx.call(out.sum().backward)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", causal=True, causal_align="top_left"), **FP32)
    if q.grad is None:
        from errkb.verify.case import Refuted

        raise Refuted("no gradient reached q")
