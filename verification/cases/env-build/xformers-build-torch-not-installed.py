"""xformers' setup.py imports torch near its top; pip builds the sdist in an isolated environment
without torch.

Reproduce: `pip install xformers==0.0.16` with pip 26.3 in a new Python 3.11 environment: 0.0.16 has
wheels only up to cp310 (PyPI file list), so pip takes xformers-0.0.16.tar.gz and runs its setup.py
in isolation (the record's audiocraft situation on Python 3.11). Fix 1: `pip install xformers==0.0.20
--only-binary xformers` resolves to a wheel for this Python, with torch 2.0.1, building nothing
(run with --dry-run: the old torch and its CUDA 11 wheels are not installed). Fix 2: torch (PyPI's
2.14.1, not the 2.0.1 of the fix) and the build tools first, then `--no-build-isolation`
on the 0.0.16 sdist (0.0.20 has a cp311 wheel, so nothing would be built): pip gets past the import and the metadata step, where the step stops."""

from verification.cases import _builds as b

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200


def reproduce(ctx):
    res = b.fresh_install(ctx, b.XFORMERS_SDIST)
    ctx.note("pip took the sdist" if "xformers-0.0.16.tar.gz" in res.output else "no sdist named in pip's output")
    ctx.expect_error(b._venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    ctx.call(b.only_binary_resolves, ctx, "xformers==0.0.20", "xformers")


def fix_2(ctx):
    res = b.no_isolation_install(ctx, b.XFORMERS_SDIST, "xformers")
    ctx.call(b.past_metadata, ctx, res, ctx.record["template"])
