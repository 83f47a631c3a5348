"""flex_attention called eagerly warns once per process that it runs unfused.

The warning is Python code in torch/nn/attention/flex_attention.py, given before anything runs
on a device: the steps use the GPU where there is one, else the CPU (their notes say which).
torch emits it once per process (it keeps the ids of warnings it has shown), and every
FlexAttention case shares one worker, so each step forgets that it was shown before calling:
otherwise a fix would pass only because an earlier step had used up the warning."""

from verification.cases._common import ref_attention
from verification.cases.pytorch._sdpa import flex_qkv, gpu_if_any

BACKEND = "flex-attention"
REQUIRES = {"packages": ["torch"]}
TIMEOUT = 300
WARNING_ID = "flex_attention_performance"  # _warn_once's id for this warning (torch 2.9-2.13)
TOL = {"atol": 2e-3, "rtol": 2e-3}  # float32 inputs, fused (Triton/C++) or unfused kernels


def causal_score(score, b, h, q_idx, kv_idx):
    """A score_mod: plain causal attention."""
    import torch

    return torch.where(q_idx >= kv_idx, score, -float("inf"))


def _fresh(ctx):
    """flex_attention's module, with the once-per-process state of this warning cleared."""
    import torch.nn.attention.flex_attention as fa

    shown = getattr(fa, "_WARNINGS_SHOWN", None)
    if shown is None:
        ctx.note("this torch keeps no _WARNINGS_SHOWN: the warning's once-state could not be cleared")
    elif WARNING_ID in shown:
        shown.discard(WARNING_ID)
        ctx.note("the warning had been shown earlier in this process; its once-state was cleared")
    return fa


def reproduce(ctx):
    gpu_if_any(ctx)
    fa = _fresh(ctx)
    q, k, v = flex_qkv(ctx)
    out = ctx.expect_warning(fa.flex_attention, q, k, v, score_mod=causal_score)
    ctx.close(out, _causal_reference(q, k, v), **TOL)  # the unfused path's numbers are right, as the record says


def fix_1(ctx):
    t = ctx.torch
    gpu_if_any(ctx)
    fa = _fresh(ctx)
    q, k, v = flex_qkv(ctx)
    t._dynamo.reset()
    flex = t.compile(fa.flex_attention)
    out = ctx.call(flex, q, k, v, score_mod=causal_score)
    ctx.close(out, _causal_reference(q, k, v), **TOL)


def fix_2(ctx):
    gpu_if_any(ctx)
    fa = _fresh(ctx)
    q, k, v = flex_qkv(ctx)
    before = fa._FLEX_ATTENTION_DISABLE_COMPILE_DEBUG
    fa._FLEX_ATTENTION_DISABLE_COMPILE_DEBUG = True
    try:
        out = ctx.call(fa.flex_attention, q, k, v, score_mod=causal_score)
    finally:
        fa._FLEX_ATTENTION_DISABLE_COMPILE_DEBUG = before
    ctx.close(out, _causal_reference(q, k, v), **TOL)


def _causal_reference(q, k, v):
    return ref_attention(q, k, v, layout="bhsd", causal=True, causal_align="top_left")
