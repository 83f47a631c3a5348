"""A use_cuda_graph=True decode wrapper needs its indptr/indices/last_page_len buffers at construction.

fix_1 plans and runs (eagerly) through the graph-mode wrapper. Shares the decode module.
"""

from verification.cases.flashinfer._fi import (D, HQ, KV_LENS, TOL, decode_wrapper, fi, graph_decode_buffers,
                                               paged, plan_decode, randn, ref, workspace)

REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flashinfer"]}
TIMEOUT = 900


def reproduce(ctx):
    ctx.expect_error(fi().BatchDecodeWithPagedKVCacheWrapper, workspace(ctx), "NHD", use_cuda_graph=True)


def fix_1(ctx):
    kv = paged(ctx)
    bufs = graph_decode_buffers(ctx, len(KV_LENS), sum(kv.pages))
    w = ctx.call(decode_wrapper, ctx, use_cuda_graph=True, **bufs)
    plan_decode(w, kv)
    q = randn(ctx, len(KV_LENS), HQ, D)
    out = ctx.call(w.run, q, kv.cache)
    ctx.close(out, ref(q, [1] * len(KV_LENS), kv), **TOL)
