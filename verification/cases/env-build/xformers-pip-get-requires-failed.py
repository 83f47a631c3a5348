"""pip's PEP 517 route asks xformers' setup.py for its build requirements in an isolated environment
without torch: 'Getting requirements to build wheel did not run successfully.'

Reproduce: `pip install xformers==0.0.16` with pip 26.3 on Python 3.11 (no cp311 wheel: pip takes
the sdist; the run of xformers-build-torch-not-installed). Fix 1: with -v the output names the
cause and the archive pip took. Fix 2: `--only-binary xformers` with 0.0.20 resolves to a wheel
(--dry-run). Fix 3: torch (PyPI's 2.14.1) and build tools first, then `--no-build-isolation` on the
0.0.16 sdist (0.0.20 has a cp311 wheel: nothing would be built): pip gets past the import and the
metadata step, where the step stops."""

from verification.cases import _builds as b

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200


def reproduce(ctx):
    res = b.fresh_install(ctx, b.XFORMERS_SDIST)
    ctx.expect_error(b._venv.raise_tool_message, "pip", res.output, ctx.record["template"])


def fix_1(ctx):
    res = b.fresh_install(ctx, b.XFORMERS_SDIST, extra=("-v",))
    ctx.call(b.box_names_cause, ctx, res)
    ctx.note("the archive: " + ("xformers-0.0.16.tar.gz named" if "xformers-0.0.16.tar.gz" in res.output else "not named"))


def fix_2(ctx):
    ctx.call(b.only_binary_resolves, ctx, "xformers==0.0.20", "xformers")


def fix_3(ctx):
    res = b.no_isolation_install(ctx, b.XFORMERS_SDIST, "xformers")
    ctx.call(b.past_metadata, ctx, res, ctx.record["template"])
