"""pip's legacy route (`python setup.py egg_info`) fails for an xformers sdist without
pyproject.toml: 'python setup.py egg_info did not run successfully.'

Reproduce: pip 24.2 with setuptools 80.9.0 and wheel 0.45.1 (so pip runs setup.py egg_info itself),
no torch, Python 3.11: `pip install xformers==0.0.16` takes xformers-0.0.16.tar.gz (no cp311 wheel,
no pyproject.toml) and egg_info stops on the missing torch. Fix 1: with -v the output shows the
cause and the archive pip picked. Fix 2: `--only-binary xformers` with 0.0.20 resolves to a wheel
(--dry-run, pip 26.3). Fix 3: torch (PyPI's 2.14.1) and the build tools first, then
`--no-build-isolation` with pip 24.2 on the 0.0.16 sdist (0.0.20 has a cp311 wheel: nothing would
be built): pip gets past egg_info, where the step stops."""

from verification.cases import _builds as b

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200


def reproduce(ctx):
    res = b.fresh_install(ctx, b.XFORMERS_SDIST, pip=b.PIP_LEGACY, legacy=True)
    ctx.expect_error(b._venv.raise_tool_message, "pip", res.output, ctx.record["template"])


def fix_1(ctx):
    res = b.fresh_install(ctx, b.XFORMERS_SDIST, pip=b.PIP_LEGACY, legacy=True, extra=("-v",))
    ctx.call(b.box_names_cause, ctx, res)
    if "xformers-0.0.16.tar.gz" not in res.output:
        raise AssertionError("the verbose log does not name the archive pip picked")


def fix_2(ctx):
    ctx.call(b.only_binary_resolves, ctx, "xformers==0.0.20", "xformers")


def fix_3(ctx):
    res = b.no_isolation_install(ctx, b.XFORMERS_SDIST, "xformers", pip=b.PIP_LEGACY)
    ctx.call(b.past_metadata, ctx, res, ctx.record["template"])
