"""A use_cuda_graph=True decode wrapper sized for 8 requests refuses a plan for 6; padding to 8 works.

The fixes run eagerly through the graph-mode wrapper (no capture). Shares the decode module.
"""

from verification.cases.flashinfer._fi import (D, HK, HQ, PAGE, TOL, decode_wrapper, graph_decode_buffers, indptr,
                                               paged, plan_decode, randn, ref)

REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flashinfer"]}
TIMEOUT = 900
LENS = (45, 100, 17, 64, 30, 81)  # the live batch: 6 requests
BUCKET = 8                         # the captured batch size


def _graph_wrapper(ctx):
    return decode_wrapper(ctx, use_cuda_graph=True, **graph_decode_buffers(ctx, BUCKET, BUCKET * 8))


def reproduce(ctx):
    kv = paged(ctx, LENS)
    w = _graph_wrapper(ctx)
    ctx.expect_error(plan_decode, w, kv)


def fix_1(ctx):
    t = ctx.torch
    kv = paged(ctx, LENS)
    w = _graph_wrapper(ctx)
    # two padding requests, each one token long on a page no real request uses
    pad = BUCKET - len(LENS)
    pages = kv.pages + [1] * pad
    indices = t.cat([kv.indices, t.tensor([kv.free[0]] * pad, dtype=t.int32, device=ctx.device)])
    last = t.cat([kv.last, t.ones(pad, dtype=t.int32, device=ctx.device)])
    ctx.call(w.plan, indptr(ctx, pages), indices, last, HQ, HK, D, PAGE, q_data_type=t.float16)
    q = randn(ctx, BUCKET, HQ, D)
    out = ctx.call(w.run, q, kv.cache)
    ctx.close(out[: len(LENS)], ref(q, [1] * len(LENS), kv), **TOL)


def fix_2(ctx):
    kv = paged(ctx, LENS)
    w = decode_wrapper(ctx)  # eager: any batch size can be planned
    ctx.call(plan_decode, w, kv)
    q = randn(ctx, len(LENS), HQ, D)
    out = ctx.call(w.run, q, kv.cache)
    ctx.close(out, ref(q, [1] * len(LENS), kv), **TOL)
