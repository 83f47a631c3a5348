"""FA2/FA3 MLA plan() refuses a float workspace too small for its partial outputs; 128 MiB works.

reproduce raises before any build; fix_1 shares the MLA module (FA3 on SM90, FA2 elsewhere).
"""

from verification.cases.flashinfer._fi import TOL, mla_backend, mla_inputs, mla_ref, mla_wrapper, plan_mla

REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flashinfer"]}
TIMEOUT = 900


def reproduce(ctx):
    m = mla_inputs(ctx)
    w = mla_wrapper(ctx, mla_backend(ctx), nbytes=1 << 20)  # 1 MiB, as in small unit tests
    ctx.expect_error(plan_mla, w, m)


def fix_1(ctx):
    m = mla_inputs(ctx)
    w = mla_wrapper(ctx, mla_backend(ctx))  # 128 MiB
    ctx.call(plan_mla, w, m)
    out = ctx.call(w.run, query=m.q, kv_cache=m.kv)
    ctx.close(out, mla_ref(m), **TOL)
