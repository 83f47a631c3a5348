"""xFormers' setup.py finds no CUTLASS headers in its source tree: 'CUTLASS submodule not found...'.

Reproduce: the record's first route, the xformers 0.0.13 sdist from PyPI (no cp311 wheel, so pip
takes the archive) on CPython 3.11 with pip 26.3 and `--no-build-isolation` in an environment with
torch 2.14.1 (PyPI): with build isolation setup.py would stop earlier on `No module named 'torch'`,
as in xformers-build-torch-not-installed. setup.py raises the RuntimeError from get_extensions
(line 157 of the archive's setup.py) in pip's metadata step. Fix 1: xformers 0.0.20 resolves to a
wheel for this Python (`--dry-run --only-binary xformers`, with its torch 2.0.1 pin; nothing is
built). Fix 2 clones xFormers from GitHub, not reachable here."""

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200


def reproduce(ctx):
    res = b.no_isolation_install(ctx, "xformers==0.0.13", "xformers")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    b.only_binary_resolves(ctx, "xformers==0.0.20", "xformers")


def fix_2(ctx):
    ctx.skip("clones xFormers with its submodules from GitHub: only PyPI is reachable from this machine")
