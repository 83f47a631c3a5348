"""Paged prefill with backend='trtllm-gen' refuses a logits_soft_cap; the fa2 backend applies it.

SM100/SM103 only: plan() loads the trtllm-gen module (precompiled cubins, fetched on first use)
before this check, and that module is built only for Blackwell. fix_1 compiles an FA2 soft-cap module.
"""

from verification.cases.flashinfer._fi import (D, HQ, Q_LENS, TOL, indptr, paged, plan_prefill, prefill_wrapper,
                                               randn, ref)

REQUIRES = {"cuda": True, "arch": ["sm100", "sm103"], "packages": ["flashinfer"]}
TIMEOUT = 900
CAP = 50.0


def reproduce(ctx):
    kv = paged(ctx)
    w = prefill_wrapper(ctx, backend="trtllm-gen")
    ctx.expect_error(plan_prefill, w, indptr(ctx, Q_LENS), kv, logits_soft_cap=CAP)


def fix_1(ctx):
    kv = paged(ctx)
    w = prefill_wrapper(ctx, backend="fa2")
    ctx.call(plan_prefill, w, indptr(ctx, Q_LENS), kv, logits_soft_cap=CAP)
    q = randn(ctx, sum(Q_LENS), HQ, D) * 8  # logits large enough for the cap to matter
    out = ctx.call(w.run, q, kv.cache)
    ctx.close(out, ref(q, Q_LENS, kv, causal=True, softcap=CAP), **TOL)
