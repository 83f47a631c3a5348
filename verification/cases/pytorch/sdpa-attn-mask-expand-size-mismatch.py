"""An attn_mask covering more key positions than the keys hold: SDPA's expand of the mask to
(batch, heads, query length, key length) refuses it.

The situation of the record, scaled down: one decoding step (query length 1) against a cache of
100 keys, with an additive bf16 mask still covering 120 positions. The reproduce step uses
SDPA's default backend choice on the GPU, as the model code does; its notes say what the
memory-efficient, cuDNN and math backends alone answer (the CPU's math path reports a plain
broadcast error instead, so the claim is about the CUDA path). Fix 2 (raise the library's max_seq_length)
needs unsloth and a model, and is not run."""

from verification.cases._common import TOL, ref_attention
from verification.cases.pytorch._sdpa import note_backends, qkv, sdpa

BACKEND = "sdpa"
REQUIRES = {"cuda": True, "packages": ["torch"]}


def _inputs(ctx, history=120):
    """q for one new token, k/v for the 100 cached positions, and a padding mask for `history`
    positions (-inf at 30-39: they stay within the 100 the keys hold)."""
    t = ctx.torch
    q, k, v = qkv(ctx, b=2, hq=4, hk=4, sq=1, sk=100, d=64)
    mask = t.zeros(2, 1, 1, history, dtype=q.dtype, device=ctx.device)
    mask[..., 30:40] = float("-inf")
    return q, k, v, mask


def reproduce(ctx):
    q, k, v, mask = _inputs(ctx)
    note_backends(ctx, ["EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "MATH"], sdpa, q, k, v, attn_mask=mask)
    ctx.expect_error(sdpa, q, k, v, attn_mask=mask)


def fix_1(ctx):
    q, k, v, mask = _inputs(ctx)
    mask = mask[..., -k.shape[-2]:]  # the positions k holds: the most recent ones
    out = ctx.call(sdpa, q, k, v, attn_mask=mask)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", mask=mask), **TOL)


def control(ctx):
    """A mask built for the keys passed, with singleton batch and head dimensions, broadcasts."""
    q, k, v, _ = _inputs(ctx)
    mask = ctx.torch.zeros(1, 1, 1, k.shape[-2], dtype=q.dtype, device=ctx.device)
    mask[..., :5] = float("-inf")
    out = ctx.call(sdpa, q, k, v, attn_mask=mask)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", mask=mask), **TOL)
