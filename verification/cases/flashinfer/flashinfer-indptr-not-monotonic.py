"""The FA2 prefill planner rejects a qo_indptr that is not a prefix sum (lengths passed as offsets).

Every step shares the prefill module (the check runs in its C++ planner).
"""

from verification.cases.flashinfer._fi import (D, HK, HQ, PAGE, Q_LENS, TOL, indptr, paged, plan_prefill,
                                               prefill_wrapper, randn, ref)

REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flashinfer"]}
TIMEOUT = 900


def reproduce(ctx):
    t = ctx.torch
    kv = paged(ctx)
    w = prefill_wrapper(ctx)
    lengths_not_offsets = t.tensor([0, *Q_LENS[::-1]], dtype=t.int32, device=ctx.device)  # [0, 12, 5]
    ctx.expect_error(plan_prefill, w, lengths_not_offsets, kv)
    # The second trigger: an int64 qo_indptr next to an int32 kv indptr (the planner's index type).
    # Three requests: the misread offsets decrease, and the same error follows.
    kv3 = paged(ctx, kv_lens=(45, 100, 30))
    ctx.expect_error(plan_prefill, prefill_wrapper(ctx), indptr(ctx, (4, 4, 4), dtype=t.int64), kv3)
    # Two requests: the misread offsets can still be non-decreasing; say what the planner does then.
    try:
        plan_prefill(prefill_wrapper(ctx), indptr(ctx, (8, 4), dtype=t.int64), kv)
        ctx.note("int64 qo_indptr [0, 8, 12] with an int32 kv indptr: planned without an error")
    except Exception as exc:  # noqa: BLE001 - only described
        ctx.note(f"int64 qo_indptr [0, 8, 12] with an int32 kv indptr: {type(exc).__name__}: {str(exc)[:200]}")


def fix_1(ctx):
    kv = paged(ctx)
    w = prefill_wrapper(ctx)
    ctx.call(plan_prefill, w, indptr(ctx, Q_LENS), kv)  # [0, 5, 17]
    q = randn(ctx, sum(Q_LENS), HQ, D)
    out = ctx.call(w.run, q, kv.cache)
    ctx.close(out, ref(q, Q_LENS, kv, causal=True), **TOL)


def fix_2(ctx):
    # metadata kept in preallocated buffers sized for 4 requests; the tail is left from a larger batch
    t = ctx.torch
    kv = paged(ctx)
    bs = len(Q_LENS)
    qo_buf = t.tensor([0, 0, 0, 9, 2], dtype=t.int32, device=ctx.device)
    kv_indptr_buf = t.tensor([0, 0, 0, 31, 4], dtype=t.int32, device=ctx.device)
    last_buf = t.full((4,), 7, dtype=t.int32, device=ctx.device)
    qo_buf[: bs + 1] = indptr(ctx, Q_LENS)
    kv_indptr_buf[: bs + 1] = kv.indptr
    last_buf[:bs] = kv.last
    w = prefill_wrapper(ctx)
    ctx.call(w.plan, qo_buf[: bs + 1], kv_indptr_buf[: bs + 1], kv.indices, last_buf[:bs], HQ, HK, D, PAGE,
             causal=True, q_data_type=t.float16)
    q = randn(ctx, sum(Q_LENS), HQ, D)
    out = ctx.call(w.run, q, kv.cache)
    ctx.close(out, ref(q, Q_LENS, kv, causal=True), **TOL)
