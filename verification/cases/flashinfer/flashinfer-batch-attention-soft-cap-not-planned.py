"""BatchAttention.run(logits_soft_cap>0) after a plan() without a cap is refused; planning the cap works.

reproduce/control share the holistic module; fix_1 compiles its soft-cap variant.
"""

from verification.cases.flashinfer._fi import HQ, Q_LENS, TOL, fi, indptr, paged, plan_holistic, randn, ref

REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flashinfer"]}
TIMEOUT = 900
CAP = 50.0


def _q(ctx):
    # larger logits (std ~8) so that a cap of 50 visibly bends the largest ones
    return randn(ctx, sum(Q_LENS), HQ, 128) * 8


def reproduce(ctx):
    kv = paged(ctx)
    w = fi().BatchAttention(kv_layout="NHD")
    plan_holistic(w, indptr(ctx, Q_LENS), kv)
    ctx.expect_error(w.run, _q(ctx), kv.cache, logits_soft_cap=CAP)


def fix_1(ctx):
    kv = paged(ctx)
    w = fi().BatchAttention(kv_layout="NHD")
    ctx.call(plan_holistic, w, indptr(ctx, Q_LENS), kv, logits_soft_cap=CAP)
    q = _q(ctx)
    out, _ = ctx.call(w.run, q, kv.cache, logits_soft_cap=CAP)
    ctx.close(out, ref(q, Q_LENS, kv, causal=True, softcap=CAP), **TOL)


def control(ctx):
    kv = paged(ctx)
    w = fi().BatchAttention(kv_layout="NHD")
    plan_holistic(w, indptr(ctx, Q_LENS), kv)
    q = _q(ctx)
    out, _ = ctx.call(w.run, q, kv.cache)
    ctx.close(out, ref(q, Q_LENS, kv, causal=True), **TOL)
