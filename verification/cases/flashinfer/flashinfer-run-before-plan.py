"""A block-sparse wrapper with backend='cake' refuses run() before plan(); planning first works.

reproduce raises before any build (the cake kernels themselves are SM100-only). fix_1 follows the
record's example with the classic decode wrapper and shares the decode module; that wrapper has no
such guard, and the reproduce step notes what it raises instead.
"""

from verification.cases.flashinfer._fi import (D, HK, HQ, KV_LENS, TOL, decode_wrapper, fi, paged, plan_decode,
                                               randn, ref, workspace)

REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flashinfer"]}
TIMEOUT = 900


def reproduce(ctx):
    q, k, v = randn(ctx, 128, HQ, D), randn(ctx, 128, HK, D), randn(ctx, 128, HK, D)
    w = fi().BlockSparseAttentionWrapper(workspace(ctx), backend="cake")
    ctx.expect_error(w.run, q, k, v)
    try:
        decode_wrapper(ctx).run(randn(ctx, 1, HQ, D), paged(ctx, (16,)).cache)
    except Exception as exc:  # noqa: BLE001 - only described
        ctx.note(f"unplanned BatchDecodeWithPagedKVCacheWrapper.run(): {type(exc).__name__}: {exc}")


def fix_1(ctx):
    kv = paged(ctx)
    w = decode_wrapper(ctx)
    ctx.call(plan_decode, w, kv)
    q = randn(ctx, len(KV_LENS), HQ, D)
    out = ctx.call(w.run, q, kv.cache)
    ctx.close(out, ref(q, [1] * len(KV_LENS), kv), **TOL)
