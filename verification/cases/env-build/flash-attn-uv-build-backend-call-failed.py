"""uv reports a failed PEP 517 build as 'Call to `setuptools.build_meta:__legacy__.build_wheel`
failed'.

Reproduce: `uv pip install flash-attn==2.8.3` with uv 0.9.0 into a new environment made by `uv venv`
(Python 3.11): setup.py stops on `No module named 'torch'` in uv's isolated build (the run of
flash-attn-uv-build-isolation-torch). Fix 1: with `--no-build-isolation` and torch (PyPI's 2.14.1)
installed, what uv prints under [stderr] names the cause, and uv gets past it and stops there. Fix 2 needs flash-attn's GitHub release wheels."""

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200


def reproduce(ctx):
    b.uv_refuses_flash_attn(ctx)


def fix_1(ctx):
    first = b.uv_install(ctx, b.FLASH_ATTN)
    causes = _venv.exception_lines(first.output.split("[stderr]", 1)[-1])
    if not causes:
        raise AssertionError("nothing under uv's [stderr] names a cause")
    ctx.note(f"under [stderr]: {causes[-1][0]}: {causes[-1][1][:200]}")
    b.flash_attn_without_isolation(ctx, "uv")


def fix_2(ctx):
    ctx.skip("needs flash-attn's GitHub release wheels: only PyPI is reachable from this machine")
