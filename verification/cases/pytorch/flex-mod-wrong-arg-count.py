"""mask_mod/score_mod must take 4 (or 5) positional arguments."""

from verification.cases._common import ref_attention
from verification.cases.pytorch._sdpa import FP32, qkv

BACKEND = "flex-attention"
REQUIRES = {"packages": ["torch"], "cpu": True}


def reproduce(ctx):
    from torch.nn.attention.flex_attention import create_block_mask

    def causal_2(q_idx, kv_idx):
        return q_idx >= kv_idx

    ctx.expect_error(create_block_mask, causal_2, None, None, 256, 256, device=ctx.device)


def fix_1(ctx):
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    t = ctx.torch
    L = 256
    doc_ids = (t.arange(L, device=ctx.device) // 100)

    def make_doc_mask(doc_ids):
        def doc_mask(b, h, q_idx, kv_idx):
            return doc_ids[q_idx] == doc_ids[kv_idx]
        return doc_mask

    bm = ctx.call(create_block_mask, make_doc_mask(doc_ids), None, None, L, L, device=ctx.device)
    q, k, v = qkv(ctx, b=1, sq=L, sk=L, d=16, dtype=t.float32)
    out = ctx.call(flex_attention, q, k, v, block_mask=bm)
    dense = doc_ids[:, None] == doc_ids[None, :]
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", mask=dense), **FP32)
