"""pip's PEP 517 route runs flash-attn's setup.py to ask for its build requirements, in an isolated
environment without torch: 'Getting requirements to build wheel did not run successfully.'

Reproduce: `pip install flash-attn==2.8.3` with pip 26.3 in a new Python 3.11 environment (the same
run as flash-attn-build-torch-not-installed). Fix 1: with `-v`, the box pip draws holds the
exception that stopped setup.py. Fix 2: torch (PyPI's 2.14.1) and the build tools first, then
`--no-build-isolation`: pip gets past this step and the metadata and stops there (the CUDA compile is not run). Fix 3 needs flash-attn's GitHub release wheels."""

from verification.cases import _builds as b

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200


def reproduce(ctx):
    res = b.fresh_install(ctx, b.FLASH_ATTN)
    ctx.note("pip's diagnostic: " + ("error: subprocess-exited-with-error" if "subprocess-exited-with-error" in res.output
                                     else "no subprocess-exited-with-error line"))
    ctx.expect_error(b._venv.raise_tool_message, "pip", res.output, ctx.record["template"])


def fix_1(ctx):
    res = b.fresh_install(ctx, b.FLASH_ATTN, extra=("-v",))
    ctx.call(b.box_names_cause, ctx, res)


def fix_2(ctx):
    b.flash_attn_without_isolation(ctx)


def fix_3(ctx):
    ctx.skip("needs flash-attn's GitHub release wheels: only PyPI is reachable from this machine")
