"""The FA2 prefill planner refuses num_qo_heads that is not a multiple of num_kv_heads.

Both steps share the prefill module (the check runs in its C++ planner).
"""

from verification.cases.flashinfer._fi import (D, HQ, Q_LENS, TOL, indptr, paged, plan_prefill, prefill_wrapper,
                                               randn, ref)

REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flashinfer"]}
TIMEOUT = 900


def reproduce(ctx):
    kv = paged(ctx)
    w = prefill_wrapper(ctx)
    # 8 query heads on this rank, but the KV head count of a different sharding (6 global / 2 ranks)
    ctx.expect_error(plan_prefill, w, indptr(ctx, Q_LENS), kv, hq=HQ, hk=3)


def fix_1(ctx):
    kv = paged(ctx)
    q = randn(ctx, sum(Q_LENS), HQ, D)
    k_cache = kv.cache[0]
    w = prefill_wrapper(ctx)
    # head counts read from the tensors this rank holds (NHD cache: heads are dim 2)
    ctx.call(plan_prefill, w, indptr(ctx, Q_LENS), kv, hq=q.shape[1], hk=k_cache.shape[2])
    out = ctx.call(w.run, q, kv.cache)
    ctx.close(out, ref(q, Q_LENS, kv, causal=True), **TOL)
