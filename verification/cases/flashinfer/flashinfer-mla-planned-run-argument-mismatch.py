"""An MLA plan made without lse_mode refuses run(return_lse=True); declaring lse_mode in plan() works.

Every step shares the MLA module (FA3 on SM90, FA2 elsewhere); the refusal comes after plan() built it.
"""

from verification.cases.flashinfer._fi import TOL, mla_backend, mla_inputs, mla_ref, mla_wrapper, plan_mla

REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flashinfer"]}
TIMEOUT = 900


def reproduce(ctx):
    m = mla_inputs(ctx)
    w = mla_wrapper(ctx, mla_backend(ctx))
    plan_mla(w, m)  # lse_mode defaults to "none"
    ctx.expect_error(w.run, query=m.q, kv_cache=m.kv, return_lse=True)


def fix_1(ctx):
    m = mla_inputs(ctx)
    w = mla_wrapper(ctx, mla_backend(ctx))
    ctx.call(plan_mla, w, m, lse_mode="base2")
    out, lse = ctx.call(w.run, query=m.q, kv_cache=m.kv, return_lse=True)
    ctx.close(out, mla_ref(m), **TOL)
    ctx.note(f"lse shape {tuple(lse.shape)}")


def control(ctx):
    m = mla_inputs(ctx)
    w = mla_wrapper(ctx, mla_backend(ctx))
    plan_mla(w, m)
    out = ctx.call(w.run, query=m.q, kv_cache=m.kv)
    ctx.close(out, mla_ref(m), **TOL)
