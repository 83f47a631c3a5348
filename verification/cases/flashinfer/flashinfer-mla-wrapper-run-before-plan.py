"""BatchMLAPagedAttentionWrapper.run() on a wrapper that was never planned stops; plan() first works.

reproduce raises before any build; fix_1 shares the MLA module (FA3 on SM90, FA2 elsewhere).
"""

from verification.cases.flashinfer._fi import TOL, mla_backend, mla_inputs, mla_ref, mla_wrapper, plan_mla

REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flashinfer"]}
TIMEOUT = 900


def reproduce(ctx):
    m = mla_inputs(ctx)
    ctx.expect_error(mla_wrapper(ctx, "auto").run, query=m.q, kv_cache=m.kv)


def fix_1(ctx):
    m = mla_inputs(ctx)
    w = mla_wrapper(ctx, mla_backend(ctx))
    ctx.call(plan_mla, w, m)
    out = ctx.call(w.run, query=m.q, kv_cache=m.kv)
    ctx.close(out, mla_ref(m), **TOL)
