"""BatchMLAPagedAttentionWrapper.plan() refuses int64 metadata (torch.arange/cumsum's default dtype).

reproduce raises before any build; fix_1 shares the MLA module (FA3 on SM90, FA2 elsewhere).
"""

from verification.cases.flashinfer._fi import TOL, mla_backend, mla_inputs, mla_ref, mla_wrapper, plan_mla

REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flashinfer"]}
TIMEOUT = 900


def reproduce(ctx):
    m = mla_inputs(ctx, idtype=ctx.torch.int64)
    ctx.expect_error(plan_mla, mla_wrapper(ctx, "auto"), m)


def fix_1(ctx):
    m = mla_inputs(ctx, idtype=ctx.torch.int64)
    for name in ("qo_indptr", "kv_indptr", "kv_indices", "kv_len"):
        setattr(m, name, getattr(m, name).to(ctx.torch.int32))
    w = mla_wrapper(ctx, mla_backend(ctx))
    ctx.call(plan_mla, w, m)
    out = ctx.call(w.run, query=m.q, kv_cache=m.kv)
    ctx.close(out, mla_ref(m), **TOL)
