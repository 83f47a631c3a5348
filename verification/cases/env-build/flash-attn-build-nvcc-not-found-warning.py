"""flash-attn's setup.py warns 'flash_attn was requested, but nvcc was not found ...' when torch
finds no CUDA toolkit.

Reproduce: the command of flash-attn-build-cuda-home-not-set (`pip install --no-build-isolation
flash-attn==2.8.3`, torch 2.14.1 from PyPI, in a mount namespace without any CUDA toolkit) with pip
26.2: pip shows setup.py's output in its box, and the warning line is emitted again here as the
UserWarning it was. The step also notes what pip 26.3 shows for the same command: its
pyproject-hooks 1.3.3 records the warnings of a PEP 517 hook and hands them back only when the hook
returns, and here the hook raises (the CUDA_HOME OSError right after the warning), so the warning
is not printed (the record says so). Fix 2 as written:
CUDA_HOME=/usr/local/cuda with the toolkit present: no warning, and pip gets to the wheel build (the
compile is not run). Fix 1 (an environment marker for macOS) needs a Mac; fix 3 needs flash-attn's
GitHub release wheels."""

import os

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200


def reproduce(ctx):
    newest = b.no_isolation_install(ctx, b.FLASH_ATTN, "flash-attn", wrap=_venv.without_toolkit)
    shown = [m for _, m in _venv.warning_lines(newest.output) if "nvcc was not found" in m]
    ctx.note(f"pip {b.PIP}: the warning is {'printed' if shown else 'not printed'}")
    res = b.no_isolation_install(ctx, b.FLASH_ATTN, "flash-attn", pip="26.2", wrap=_venv.without_toolkit)
    ctx.expect_warning(b.reemit_warnings, res.output)


def fix_1(ctx):
    ctx.skip("needs macOS (the fix is an environment marker that leaves flash-attn out there)")


def fix_2(ctx):
    if not os.path.exists("/usr/local/cuda/bin/nvcc"):
        ctx.skip("needs a CUDA toolkit at /usr/local/cuda (the fix's path)")
    path = "/usr/local/cuda/bin" + os.pathsep + os.environ.get("PATH", "")
    res = b.no_isolation_install(ctx, b.FLASH_ATTN, "flash-attn", env_extra={"CUDA_HOME": "/usr/local/cuda", "PATH": path})
    ctx.call(b.past_metadata, ctx, res, ctx.record["template"])


def fix_3(ctx):
    ctx.skip("needs flash-attn's GitHub release wheels: only PyPI is reachable from this machine")
