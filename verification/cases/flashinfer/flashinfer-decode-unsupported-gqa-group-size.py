"""CUDA-core decode has no kernel for 5 query heads per KV head; tensor-core decode runs any ratio.

reproduce/control share the decode module, fix_1 the prefill module. fix_2
(single_decode_with_kv_cache(use_tensor_cores=True)) is not written: it needs its own single-prefill
module and shows the same thing as fix_1.
"""

from verification.cases.flashinfer._fi import D, HK, KV_LENS, TOL, decode_wrapper, paged, plan_decode, randn, ref

REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flashinfer"]}
TIMEOUT = 900
HQ5 = 5 * HK  # e.g. 40 query / 8 KV heads of Qwen2.5-14B, per rank


def reproduce(ctx):
    kv = paged(ctx)
    w = decode_wrapper(ctx)
    ctx.expect_error(plan_decode, w, kv, hq=HQ5)


def fix_1(ctx):
    kv = paged(ctx)
    w = decode_wrapper(ctx, use_tensor_cores=True)
    ctx.call(plan_decode, w, kv, hq=HQ5)
    q = randn(ctx, len(KV_LENS), HQ5, D)
    out = ctx.call(w.run, q, kv.cache)
    ctx.close(out, ref(q, [1] * len(KV_LENS), kv), **TOL)


def control(ctx):
    # 4 query heads per KV head is an instantiated ratio
    kv = paged(ctx)
    w = decode_wrapper(ctx)
    plan_decode(w, kv, hq=4 * HK)
    q = randn(ctx, len(KV_LENS), 4 * HK, D)
    out = ctx.call(w.run, q, kv.cache)
    ctx.close(out, ref(q, [1] * len(KV_LENS), kv), **TOL)
