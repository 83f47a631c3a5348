"""An additive float32 attn_mask with fp16 q/k/v: the memory-efficient kernel wants the bias in
the query's dtype.

As the record says, whether SDPA's default choice reaches that kernel depends on the torch
release and GPU (on torch 2.11 with an H200 it did not), so the trigger forces the
memory-efficient backend, and so do the fixes: they must run in that very kernel."""

from verification.cases._common import TOL, ref_attention
from verification.cases.pytorch._sdpa import in_backends, padding_mask, qkv, sdpa

BACKEND = "sdpa"
REQUIRES = {"cuda": True, "packages": ["torch"]}
EFFICIENT = ["EFFICIENT_ATTENTION"]


def _inputs(ctx, dtype=None):
    """q, k, v (2, 4, 128, 64) in fp16 (or `dtype`), the padding mask as bool (True keeps) and as
    an additive float32 mask built without a dtype, as torch.zeros gives it."""
    t = ctx.torch
    q, k, v = qkv(ctx, d=64, dtype=dtype or t.float16)
    keep = padding_mask(ctx)
    additive = t.zeros(128, 128, device=ctx.device).masked_fill(~keep, float("-inf"))
    return q, k, v, keep, additive


def reproduce(ctx):
    q, k, v, _, additive = _inputs(ctx)
    ctx.expect_error(in_backends, EFFICIENT, sdpa, q, k, v, attn_mask=additive)


def fix_1(ctx):
    q, k, v, keep, additive = _inputs(ctx)
    out = ctx.call(in_backends, EFFICIENT, sdpa, q, k, v, attn_mask=additive.to(q.dtype))
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", mask=keep), **TOL)


def fix_2(ctx):
    q, k, v, keep, _ = _inputs(ctx)
    out = ctx.call(in_backends, EFFICIENT, sdpa, q, k, v, attn_mask=keep)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", mask=keep), **TOL)


def control(ctx):
    """The same float32 mask with float32 q/k/v: the dtypes match, and the kernel takes it."""
    t = ctx.torch
    q, k, v, keep, additive = _inputs(ctx, dtype=t.float32)
    out = ctx.call(in_backends, EFFICIENT, sdpa, q, k, v, attn_mask=additive)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", mask=keep), atol=1e-3, rtol=1e-3)
