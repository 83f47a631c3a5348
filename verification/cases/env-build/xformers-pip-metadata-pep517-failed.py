"""pip's PEP 517 metadata step fails while xformers' setup.py runs without build isolation: 'Preparing
metadata (pyproject.toml) did not run successfully.'

Reproduce: the record's first situation with the PyPI sdist in place of the git URL (GitHub is out of
reach): `pip install --no-build-isolation xformers==0.0.16` with pip 26.3 on Python 3.11 (no cp311 wheel,
so pip takes the sdist) in a new environment holding setuptools 80.9.0 and wheel 0.45.1 but no torch:
pip asks setuptools' backend for the metadata, setup.py's `import torch` fails, and pip draws the record's
heading. Fix 1: with -v the traceback, ending in the missing torch, streams above pip's box. Fix 2:
`--only-binary xformers` with 0.0.20 (its cp311 wheel, built for torch 2.0.1) resolves to the wheel
(--dry-run). Fix 3: torch (PyPI's 2.14.1) and the build tools first, then `--no-build-isolation` on the
same sdist: pip gets past the metadata step, where the step stops (the compile itself is not run)."""

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
NO_ISOLATION = ("--no-build-isolation",)


def reproduce(ctx):
    res = b.fresh_install(ctx, b.XFORMERS_SDIST, legacy=True, extra=NO_ISOLATION)
    ctx.note("setup.py stopped on: " + _venv.last_exception(res.output, 200))
    ctx.expect_error(_venv.raise_tool_message, "pip", res.output, ctx.record["template"])


def fix_1(ctx):
    res = b.fresh_install(ctx, b.XFORMERS_SDIST, legacy=True, extra=("-v", *NO_ISOLATION))
    ctx.call(b.box_names_cause, ctx, res)


def fix_2(ctx):
    ctx.call(b.only_binary_resolves, ctx, "xformers==0.0.20", "xformers")


def fix_3(ctx):
    res = b.no_isolation_install(ctx, b.XFORMERS_SDIST, "xformers")
    ctx.call(b.past_metadata, ctx, res, ctx.record["template"])
