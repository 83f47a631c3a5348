"""Decode run() refuses a bf16 q after a plan() that kept the default q_data_type (float16).

reproduce and fix_2 share the decode module (fp16); fix_1 compiles its own bf16 decode module.
"""

from verification.cases.flashinfer._fi import (D, HK, HQ, KV_LENS, PAGE, TOL, decode_wrapper, paged, plan_decode,
                                               randn, ref)

REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flashinfer"]}
TIMEOUT = 900
B = len(KV_LENS)


def reproduce(ctx):
    bf16 = ctx.torch.bfloat16
    kv = paged(ctx, dtype=bf16)
    w = decode_wrapper(ctx)
    w.plan(kv.indptr, kv.indices, kv.last, HQ, HK, D, PAGE)  # no q_data_type: float16 is assumed
    ctx.expect_error(w.run, randn(ctx, B, HQ, D, dtype=bf16), kv.cache)


def fix_1(ctx):
    bf16 = ctx.torch.bfloat16
    kv = paged(ctx, dtype=bf16)
    q = randn(ctx, B, HQ, D, dtype=bf16)
    w = decode_wrapper(ctx)
    ctx.call(plan_decode, w, kv, q_data_type=q.dtype, kv_data_type=kv.k.dtype)
    out = ctx.call(w.run, q, kv.cache)
    ctx.close(out, ref(q, [1] * B, kv), **TOL)


def fix_2(ctx):
    # the plan stays float16: cast the query and the cache to it
    t = ctx.torch
    kv = paged(ctx, dtype=t.bfloat16)
    q = randn(ctx, B, HQ, D, dtype=t.bfloat16)
    w = decode_wrapper(ctx)
    plan_decode(w, kv)
    cache16 = tuple(c.to(t.float16) for c in kv.cache)
    out = ctx.call(w.run, q.to(t.float16), cache16)
    ctx.close(out, ref(q, [1] * B, kv), **TOL)
