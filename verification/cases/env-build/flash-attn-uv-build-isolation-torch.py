"""uv builds flash-attn in an isolated environment without torch, and adds a hint that torch is an
undeclared build dependency.

Reproduce: `uv pip install flash-attn==2.8.3` with uv 0.9.0 (the newest release the record read)
into a new environment made by `uv venv` (Python 3.11). Fix 1: torch (PyPI's 2.14.1) and the build
tools first, then `uv pip install flash-attn --no-build-isolation`: uv gets past the import; it is
stopped when it starts building (the CUDA compile is not run). Fix 2 (pyproject settings of a uv
project) and fix 3 (GitHub release wheels) are not run here."""

from verification.cases import _builds as b

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200


def reproduce(ctx):
    b.uv_refuses_flash_attn(ctx)


def fix_1(ctx):
    b.flash_attn_without_isolation(ctx, "uv")


def fix_2(ctx):
    ctx.skip("a uv project's pyproject settings: not run here (fix 1 covers the same no-isolation route)")


def fix_3(ctx):
    ctx.skip("needs flash-attn's GitHub release wheels: only PyPI is reachable from this machine")
