"""The trtllm-gen MLA backend refuses GPUs other than SM100/SM103/SM107; auto or the GPU's FA backend runs.

reproduce raises in plan() before any build; the fixes share the MLA module (FA3 on SM90).
"""

from verification.cases.flashinfer._fi import TOL, mla_inputs, mla_ref, mla_wrapper, plan_mla

REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flashinfer"]}
STEP_REQUIRES = {"reproduce": {"arch": ["sm80-sm90", "sm110+"]}}
TIMEOUT = 900


def _plan_and_run(ctx, backend):
    m = mla_inputs(ctx)
    w = mla_wrapper(ctx, backend)
    ctx.call(plan_mla, w, m)
    out = ctx.call(w.run, query=m.q, kv_cache=m.kv)
    ctx.close(out, mla_ref(m), **TOL)


def reproduce(ctx):
    m = mla_inputs(ctx)
    ctx.expect_error(plan_mla, mla_wrapper(ctx, "trtllm-gen"), m)


def fix_1(ctx):
    _plan_and_run(ctx, "auto")


def fix_2(ctx):
    # the record's rule: trtllm-gen on SM10x, fa3 on SM90, fa2 otherwise
    cc = ctx.cc
    _plan_and_run(ctx, "trtllm-gen" if cc[0] == 10 else ("fa3" if cc == (9, 0) else "fa2"))
