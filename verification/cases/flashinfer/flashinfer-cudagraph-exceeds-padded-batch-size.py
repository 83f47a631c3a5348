"""Under CUDA graphs, FA2 prefill planning with a small fixed_split_size overflows the padded grid.

One request with more 16-token pages than the padded work-item budget (2 CTAs per SM over the KV
heads) and fixed_split_size=1 page needs one work item per page. Shares the prefill module.
"""

from verification.cases.flashinfer._fi import (D, HK, HQ, TOL, indptr, paged, plan_prefill, prefill_wrapper, randn,
                                               ref)

REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flashinfer"]}
TIMEOUT = 900
Q_LEN = 4


def _long_kv(ctx):
    # the planner's budget: 2 CTAs per SM, shared by the KV heads
    budget = 2 * ctx.torch.cuda.get_device_properties(ctx.device).multi_processor_count // HK
    return paged(ctx, (16 * (budget + 8) - 5,))


def _graph_wrapper(ctx, kv):
    t = ctx.torch
    return prefill_wrapper(ctx, use_cuda_graph=True,
                           qo_indptr_buf=t.zeros(2, dtype=t.int32, device=ctx.device),
                           paged_kv_indptr_buf=t.zeros(2, dtype=t.int32, device=ctx.device),
                           paged_kv_indices_buf=t.zeros(len(kv.indices), dtype=t.int32, device=ctx.device),
                           paged_kv_last_page_len_buf=t.zeros(1, dtype=t.int32, device=ctx.device))


def _run(ctx, w, kv):
    q = randn(ctx, Q_LEN, HQ, D)
    out = ctx.call(w.run, q, kv.cache)
    ctx.close(out, ref(q, [Q_LEN], kv, causal=True), **TOL)


def reproduce(ctx):
    kv = _long_kv(ctx)
    w = _graph_wrapper(ctx, kv)
    ctx.expect_error(plan_prefill, w, indptr(ctx, [Q_LEN]), kv, fixed_split_size=1)


def fix_1(ctx):
    # let the planner choose the KV split under CUDA graphs
    kv = _long_kv(ctx)
    w = _graph_wrapper(ctx, kv)
    ctx.call(plan_prefill, w, indptr(ctx, [Q_LEN]), kv)
    _run(ctx, w, kv)


def fix_2(ctx):
    kv = _long_kv(ctx)
    w = _graph_wrapper(ctx, kv)
    ctx.call(plan_prefill, w, indptr(ctx, [Q_LEN]), kv, fixed_split_size=1, disable_split_kv=True)
    _run(ctx, w, kv)


def control(ctx):
    # the same fixed split in an eager wrapper: its grid is sized per plan
    kv = _long_kv(ctx)
    w = prefill_wrapper(ctx)
    ctx.call(plan_prefill, w, indptr(ctx, [Q_LEN]), kv, fixed_split_size=1)
    _run(ctx, w, kv)
