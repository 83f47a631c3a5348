"""Tensor-core decode planned for one token per request refuses a q with two rows per request.

Every step shares the prefill module (tensor-core decode loads the FA2 prefill kernels).
"""

from verification.cases.flashinfer._fi import (D, HQ, KV_LENS, TOL, decode_wrapper, indptr, paged, plan_decode,
                                               plan_prefill, prefill_wrapper, randn, ref)

REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flashinfer"]}
TIMEOUT = 900
B = len(KV_LENS)


def reproduce(ctx):
    kv = paged(ctx)
    w = decode_wrapper(ctx, use_tensor_cores=True)
    plan_decode(w, kv)  # q_len_per_req defaults to 1
    ctx.expect_error(w.run, randn(ctx, 2 * B, HQ, D), kv.cache)


def fix_1(ctx):
    kv = paged(ctx)
    w = decode_wrapper(ctx, use_tensor_cores=True)
    ctx.call(plan_decode, w, kv, q_len_per_req=2)
    q = randn(ctx, 2 * B, HQ, D)
    out = ctx.call(w.run, q, kv.cache)
    # the two new tokens are the last two cached positions: causal within the request
    ctx.close(out, ref(q, [2] * B, kv, causal=True), **TOL)


def fix_2(ctx):
    kv = paged(ctx)
    w = prefill_wrapper(ctx)
    ctx.call(plan_prefill, w, indptr(ctx, [2] * B), kv, causal=True)
    q = randn(ctx, 2 * B, HQ, D)
    out = ctx.call(w.run, q, kv.cache)
    ctx.close(out, ref(q, [2] * B, kv, causal=True), **TOL)


def control(ctx):
    kv = paged(ctx)
    w = decode_wrapper(ctx, use_tensor_cores=True)
    plan_decode(w, kv)
    q = randn(ctx, B, HQ, D)
    out = ctx.call(w.run, q, kv.cache)
    ctx.close(out, ref(q, [1] * B, kv), **TOL)
