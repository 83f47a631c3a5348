"""FA2 refuses an empty batch (here: varlen offsets describing no sequence) instead of returning nothing."""

from importlib import import_module

fa = import_module("verification.cases.flash-attn._fa")

BACKEND = "flash-attn"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flash_attn", "flash_attn_2_cuda"]}


def _empty(ctx):
    """A micro-batch left with no tokens after padding removal: cu_seqlens is just [0]."""
    t = ctx.torch
    q, k, v = fa.packed(ctx, lens=[0])
    return q, k, v, t.zeros(1, dtype=t.int32, device=ctx.device)


def _guarded(q, k, v, cu_q, cu_k, max_q, max_k, **kwargs):
    """The record's fix: skip the call for an empty batch."""
    if cu_q.numel() <= 1:
        return q.new_empty(q.shape[:-1] + (v.shape[-1],))
    return fa.fa2().flash_attn_varlen_func(q, k, v, cu_q, cu_k, max_q, max_k, **kwargs)


def reproduce(ctx):
    q, k, v, cu = _empty(ctx)
    ctx.expect_error(fa.fa2().flash_attn_varlen_func, q, k, v, cu, cu, 128, 128)


def fix_1(ctx):
    q, k, v, cu = _empty(ctx)
    out = ctx.call(_guarded, q, k, v, cu, cu, 128, 128)
    ctx.close(out, q.new_zeros(0, 4, 128), atol=0.0, what="empty output")
    # the same guard on a non-empty batch still reaches FA2
    q, k, v = fa.packed(ctx)
    cu = fa.cu_seqlens(ctx, fa.LENS)
    fa.varlen_matches(ctx, _guarded, q, k, v, cu, cu)


def control(ctx):
    q, k, v = fa.packed(ctx)
    cu = fa.cu_seqlens(ctx, fa.LENS)
    fa.varlen_matches(ctx, fa.fa2().flash_attn_varlen_func, q, k, v, cu, cu, causal=True)
