"""`import flash_attn` from the root of a flash-attention source tree: Python finds the checkout's
flash_attn/ first, whose interface imports the compiled flash_attn_2_cuda, which is not there.

Reproduce: flash-attn 2.8.3's sdist unpacked (the same tree as the git tag), torch 2.14.1 from PyPI
installed, `python -c "import flash_attn"` run in that folder (the record's first situation).
Fix 1 as written: from /tmp the same interpreter no longer picks up the checkout (flash-attn is not
installed there, so it now says so: the diagnostic shows which flash_attn was imported). Fix 2
reinstalls flash-attn with its CUDA build (hours of compiling, not run); fix 3 is for ROCm."""

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200


def _checkout(ctx):
    return b.flash_attn_source(ctx, "2.8.3")


def reproduce(ctx):
    root = _checkout(ctx)
    res = b.run_with_torch(ctx, "import flash_attn", cwd=root)
    ctx.note(f"in {root.name}/: " + res.summary())
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    _checkout(ctx)
    res = b.run_with_torch(ctx, "import flash_attn; print(flash_attn.__file__); import flash_attn_2_cuda", cwd="/tmp")
    last = _venv.exception_lines(res.output)
    ctx.note("from /tmp: " + (f"{last[-1][0]}: {last[-1][1]}" if last else res.tail(200)))
    ctx.call(_venv.reraise, res.output, ctx.record["template"])


def fix_2(ctx):
    ctx.skip("reinstalls flash-attn with its CUDA build: hours of compiling on this machine, and no GPU to use it")


def fix_3(ctx):
    ctx.skip("needs an AMD GPU with ROCm")
