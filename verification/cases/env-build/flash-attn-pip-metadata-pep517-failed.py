"""pip's PEP 517 metadata step fails while flash-attn's setup.py runs: 'Preparing metadata
(pyproject.toml) did not run successfully.'

Reproduce: the record's second situation: pip 26.3 following the README (`pip install flash-attn==2.8.3
--no-build-isolation`, torch 2.14.1 from PyPI and the build tools installed) where no CUDA toolkit
exists (a mount namespace hiding /usr/local/cuda* and nvcc: the run of
flash-attn-build-cuda-home-not-set). Fix 1: pip's box holds what setup.py stopped on. Fix 2 as
written, on this machine with its toolkit: every build-time import present, pip gets past the
metadata and stops there. Fix 3 needs flash-attn's GitHub release wheels."""

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200


def reproduce(ctx):
    res = b.no_isolation_install(ctx, b.FLASH_ATTN, "flash-attn", wrap=_venv.without_toolkit)
    ctx.expect_error(_venv.raise_tool_message, "pip", res.output, ctx.record["template"])


def fix_1(ctx):
    res = b.no_isolation_install(ctx, b.FLASH_ATTN, "flash-attn", wrap=_venv.without_toolkit)
    ctx.call(b.box_names_cause, ctx, res)


def fix_2(ctx):
    b.flash_attn_without_isolation(ctx)


def fix_3(ctx):
    ctx.skip("needs flash-attn's GitHub release wheels: only PyPI is reachable from this machine")
