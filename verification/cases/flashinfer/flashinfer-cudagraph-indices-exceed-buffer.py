"""A CUDA-graph decode wrapper refuses a plan whose page list outgrows its indices buffer.

Shares the decode module.
"""

from verification.cases.flashinfer._fi import (D, HQ, KV_LENS, PAGE, TOL, decode_wrapper, graph_decode_buffers,
                                               paged, plan_decode, randn, ref)

REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flashinfer"]}
TIMEOUT = 900
MAX_MODEL_LEN = 256


def reproduce(ctx):
    kv = paged(ctx)  # 3 + 7 pages
    w = decode_wrapper(ctx, use_cuda_graph=True, **graph_decode_buffers(ctx, len(KV_LENS), 4))
    ctx.expect_error(plan_decode, w, kv)


def fix_1(ctx):
    # sized for the worst case: every request at the longest supported context
    max_pages = -(-MAX_MODEL_LEN // PAGE)
    kv = paged(ctx)
    w = decode_wrapper(ctx, use_cuda_graph=True, **graph_decode_buffers(ctx, len(KV_LENS), len(KV_LENS) * max_pages))
    ctx.call(plan_decode, w, kv)
    q = randn(ctx, len(KV_LENS), HQ, D)
    out = ctx.call(w.run, q, kv.cache)
    ctx.close(out, ref(q, [1] * len(KV_LENS), kv), **TOL)
