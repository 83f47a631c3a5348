"""ninja ends a failed torch extension build with its own line "ninja: build stopped: subcommand failed.",
after the 'FAILED:' step and the compiler's message and before torch's CalledProcessError for the ninja
command; flash-attn's source build goes through the same torch BuildExtension and ninja.

flash-attn's CUDA kernels cannot be compiled to a failure that means anything on this machine in a
step's time (the shared _builds.fa_compile_recipe needs PyPI's CUDA torch and minutes of nvcc on two
cores), so the case builds the one-file C++ extension of verification/cases/_torch_ext.py with the same
machinery instead (torch 2.13.0+cpu, ninja from PyPI, pip 26.3 -v --no-build-isolation). The record's flash-attn specifics (setup.py's wheel
download and its fallback) were read, not run.

Reproduce: the log holds the record's line, after a 'FAILED:' line and the compiler's 'error', and
before the CalledProcessError for the ninja command. Fix 1: the fix's grep, run on that log, shows the
FAILED line and the compiler error among its first ten lines, ahead of ninja's line; MAX_JOBS=1 is
passed to ninja as '-j 1' (torch's _run_ninja_build). Fixes 2-4 need flash-attn's GitHub release
wheels, a GPU build or Windows."""

from verification.cases import _builds as b
from verification.cases import _torch_ext as t
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 900
ORDER = (t.FAILED, t.COMPILER_ERROR, t.NINJA_STOPPED, t.NINJA_CALLED)


def reproduce(ctx):
    res = t.build(ctx)
    t.lines_in_order(ctx, res, "ninja's line", ORDER)
    ctx.expect_error(_venv.raise_tool_message, "ninja", res.output, ctx.record["template"])


fix_1 = t.GREP_FIX


def fix_2(ctx):
    ctx.skip("installs a release wheel from flash-attn's GitHub releases (not reachable from here)")


def fix_3(ctx):
    ctx.skip("lowering MAX_JOBS/NVCC_THREADS matters for nvcc compiling flash-attn's kernels (a CUDA build)")


fix_4 = b.windows_fix
