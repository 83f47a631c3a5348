"""Wrappers accept only kv_layout 'NHD' or 'HND' (case-sensitive); a lower-case name is a KeyError.

reproduce raises in the constructor; fix_1 and control share the decode module (the layout is a
run-time argument of the kernel).
"""

from verification.cases.flashinfer._fi import D, HQ, KV_LENS, TOL, fi, paged, plan_decode, randn, ref, workspace

REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flashinfer"]}
TIMEOUT = 900


def reproduce(ctx):
    ctx.expect_error(fi().BatchDecodeWithPagedKVCacheWrapper, workspace(ctx), kv_layout="nhd", backend="fa2")


def fix_1(ctx):
    kv = paged(ctx)  # [pages, page_size, kv_heads, head_dim]
    w = ctx.call(fi().BatchDecodeWithPagedKVCacheWrapper, workspace(ctx), kv_layout="NHD", backend="fa2")
    plan_decode(w, kv)
    q = randn(ctx, len(KV_LENS), HQ, D)
    out = ctx.call(w.run, q, kv.cache)
    ctx.close(out, ref(q, [1] * len(KV_LENS), kv), **TOL)


def control(ctx):
    # the same cache stored head-major, described as HND
    kv = paged(ctx)
    w = fi().BatchDecodeWithPagedKVCacheWrapper(workspace(ctx), kv_layout="HND", backend="fa2")
    plan_decode(w, kv)
    q = randn(ctx, len(KV_LENS), HQ, D)
    hnd = tuple(c.transpose(1, 2).contiguous() for c in kv.cache)
    out = ctx.call(w.run, q, hnd)
    ctx.close(out, ref(q, [1] * len(KV_LENS), kv), **TOL)
