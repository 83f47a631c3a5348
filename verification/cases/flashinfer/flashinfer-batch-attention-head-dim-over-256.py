"""BatchAttention.plan() refuses head_dim > 256; the FA2 paged prefill wrapper runs head_dim 512.

fix_1 compiles its own FA2 prefill module for head_dim 512 (shared with
flashinfer-prefill-shared-memory-exceeds-limit:fix-2); control compiles the holistic module.
"""

from verification.cases.flashinfer._fi import (HK, HQ, PAGE, Q_LENS, TOL, fi, indptr, paged, plan_holistic,
                                               prefill_wrapper, randn, ref)

REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flashinfer"]}
TIMEOUT = 900


def reproduce(ctx):
    kv = paged(ctx)
    w = fi().BatchAttention(kv_layout="NHD")
    ctx.expect_error(w.plan, indptr(ctx, Q_LENS), kv.indptr, kv.indices, kv.lens, HQ, HK, 512, 512, PAGE,
                     causal=True, q_data_type=ctx.torch.float16, kv_data_type=ctx.torch.float16)


def fix_1(ctx):
    # the message's first suggestion: FA2 paged prefill with the same 512-wide heads
    kv = paged(ctx, d=512)
    w = prefill_wrapper(ctx)
    ctx.call(w.plan, indptr(ctx, Q_LENS), kv.indptr, kv.indices, kv.last, HQ, HK, 512, PAGE, causal=True,
             q_data_type=ctx.torch.float16)
    q = randn(ctx, sum(Q_LENS), HQ, 512)
    out = ctx.call(w.run, q, kv.cache)
    ctx.close(out, ref(q, Q_LENS, kv, causal=True), **TOL)


def control(ctx):
    # head_dim 128 is within the persistent kernel's tiles
    kv = paged(ctx)
    w = fi().BatchAttention(kv_layout="NHD")
    ctx.call(plan_holistic, w, indptr(ctx, Q_LENS), kv)
    q = randn(ctx, sum(Q_LENS), HQ, 128)
    out, _ = ctx.call(w.run, q, kv.cache)
    ctx.close(out, ref(q, Q_LENS, kv, causal=True), **TOL)
