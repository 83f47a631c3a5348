"""The CUDA-core decode kernel stops when the value head dim differs from the query/key head dim.

plan() of BatchDecodeWithPagedKVCacheWrapper takes a single head_dim in 0.7.4, so the trigger
reachable through the public API is a value cache narrower than q at run(): the same check in the
C++ run entry point (batch_decode.cu). Shares the decode module; fix_1 builds a prefill module
for the (192, 128) head dims.
"""

from verification.cases.flashinfer._fi import (HK, HQ, KV_LENS, PAGE, TOL, decode_wrapper, indptr, paged, plan_decode,
                                               prefill_wrapper, randn, ref)

REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flashinfer"]}
TIMEOUT = 900


def reproduce(ctx):
    kv = paged(ctx, dv=64)  # MLA-style: 128-wide keys, 64-wide values
    w = decode_wrapper(ctx)
    plan_decode(w, kv)
    ctx.expect_error(w.run, randn(ctx, len(KV_LENS), HQ, 128), kv.cache)


def fix_1(ctx):
    # one query row per request through the prefill wrapper, which takes head_dim_vo
    t = ctx.torch
    kv = paged(ctx, d=192, dv=128)
    w = prefill_wrapper(ctx)
    ctx.call(w.plan, indptr(ctx, [1] * len(KV_LENS)), kv.indptr, kv.indices, kv.last, HQ, HK, 192, PAGE,
             head_dim_vo=128, q_data_type=t.float16)
    q = randn(ctx, len(KV_LENS), HQ, 192)
    out = ctx.call(w.run, q, kv.cache)
    ctx.close(out, ref(q, [1] * len(KV_LENS), kv), **TOL)


def control(ctx):
    kv = paged(ctx)
    w = decode_wrapper(ctx)
    plan_decode(w, kv)
    q = randn(ctx, len(KV_LENS), HQ, 128)
    out = ctx.call(w.run, q, kv.cache)
    ctx.close(out, ref(q, [1] * len(KV_LENS), kv), **TOL)
