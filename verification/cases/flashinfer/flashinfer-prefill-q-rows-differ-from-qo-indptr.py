"""Paged prefill run() refuses a q whose row count differs from the planned qo_indptr[-1] (a padded q).

Every step shares the prefill module (the refusal comes after plan() built it). fix_2 (cuDNN
backend with token-unit offsets) is not written: it needs backend='cudnn' and cudnn-frontend.
"""

from verification.cases.flashinfer._fi import (D, HQ, Q_LENS, TOL, indptr, paged, plan_prefill, prefill_wrapper,
                                               randn, ref)

REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flashinfer"]}
TIMEOUT = 900
PADDED = 32  # a CUDA-graph bucket larger than the 17 real tokens


def reproduce(ctx):
    kv = paged(ctx)
    w = prefill_wrapper(ctx)
    plan_prefill(w, indptr(ctx, Q_LENS), kv)
    ctx.expect_error(w.run, randn(ctx, PADDED, HQ, D), kv.cache)


def fix_1(ctx):
    kv = paged(ctx)
    qo_indptr = indptr(ctx, Q_LENS)
    w = prefill_wrapper(ctx)
    ctx.call(plan_prefill, w, qo_indptr, kv)
    q_padded = randn(ctx, PADDED, HQ, D)
    out = ctx.call(w.run, q_padded[: int(qo_indptr[-1])], kv.cache)
    ctx.close(out, ref(q_padded[: sum(Q_LENS)], Q_LENS, kv, causal=True), **TOL)
