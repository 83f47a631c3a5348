"""A 5-d attn_mask ([B, 1, 1, L, S], one unsqueeze too many): SDPA's expand of the mask to the
4-d attention shape cannot drop a dimension.

As in the record's message the mask is an additive bf16 one on the GPU, and the call uses SDPA's
default backend choice; the reproduce step's notes say what the memory-efficient, cuDNN and
math backends alone answer (the CPU's math path reports a plain broadcast error instead)."""

from verification.cases._common import TOL, ref_attention
from verification.cases.pytorch._sdpa import note_backends, qkv, sdpa

BACKEND = "sdpa"
REQUIRES = {"cuda": True, "packages": ["torch"]}


def _inputs(ctx):
    """q, k, v (2, 4, 64, 64) in bf16, and a [B, L, S] block mask: keep (bool) and additive (bf16)."""
    t = ctx.torch
    q, k, v = qkv(ctx, b=2, sq=64, sk=64, d=64)
    keep = t.ones(2, 64, 64, dtype=t.bool, device=ctx.device)
    keep[0, :, 48:] = False  # the first sequence is padded from position 48 on
    block_mask = t.zeros(2, 64, 64, dtype=q.dtype, device=ctx.device).masked_fill(~keep, float("-inf"))
    return q, k, v, keep, block_mask


def reproduce(ctx):
    q, k, v, _, block_mask = _inputs(ctx)
    mask = block_mask[:, None, None]  # [B, 1, 1, L, S]
    note_backends(ctx, ["EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "MATH"], sdpa, q, k, v, attn_mask=mask)
    ctx.expect_error(sdpa, q, k, v, attn_mask=mask)


def fix_1(ctx):
    q, k, v, keep, block_mask = _inputs(ctx)
    mask = block_mask[:, None]  # [B, 1, L, S]
    out = ctx.call(sdpa, q, k, v, attn_mask=mask)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", mask=keep[:, None]), **TOL)
