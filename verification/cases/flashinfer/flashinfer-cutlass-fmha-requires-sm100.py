"""The ragged prefill wrapper with backend='cutlass' refuses GPUs other than SM100/SM110; 'fa2' runs.

reproduce raises before any build; fix_1 and control share the prefill module (the ragged kernels
are in the same FA2 module as the paged ones).
"""

from types import SimpleNamespace

from verification.cases.flashinfer._fi import D, HK, HQ, KV_LENS, Q_LENS, TOL, fi, indptr, randn, ref, workspace

REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flashinfer"]}
STEP_REQUIRES = {"reproduce": {"arch": ["sm80-sm90", "sm120+"]}}
TIMEOUT = 900


def _ragged(ctx):
    k, v = randn(ctx, sum(KV_LENS), HK, D), randn(ctx, sum(KV_LENS), HK, D)
    cut = [0, KV_LENS[0], sum(KV_LENS)]
    spans = list(zip(cut, cut[1:]))
    return SimpleNamespace(k=k, v=v, ks=[k[a:b] for a, b in spans], vs=[v[a:b] for a, b in spans])


def _plan(w, ctx, causal):
    w.plan(indptr(ctx, Q_LENS), indptr(ctx, KV_LENS), HQ, HK, D, causal=causal, q_data_type=ctx.torch.float16)


def reproduce(ctx):
    w = fi().BatchPrefillWithRaggedKVCacheWrapper(workspace(ctx), "NHD", backend="cutlass")
    ctx.expect_error(_plan, w, ctx, True)


def fix_1(ctx):
    kv = _ragged(ctx)
    w = fi().BatchPrefillWithRaggedKVCacheWrapper(workspace(ctx), "NHD", backend="fa2")
    ctx.call(_plan, w, ctx, True)
    q = randn(ctx, sum(Q_LENS), HQ, D)
    out = ctx.call(w.run, q, kv.k, kv.v)
    ctx.close(out, ref(q, Q_LENS, kv, causal=True), **TOL)


def control(ctx):
    kv = _ragged(ctx)
    w = fi().BatchPrefillWithRaggedKVCacheWrapper(workspace(ctx), "NHD", backend="fa2")
    _plan(w, ctx, False)
    q = randn(ctx, sum(Q_LENS), HQ, D)
    out = ctx.call(w.run, q, kv.k, kv.v)
    ctx.close(out, ref(q, Q_LENS, kv, causal=False), **TOL)
