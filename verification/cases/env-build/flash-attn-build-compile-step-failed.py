"""ninja's 'FAILED: <object>.o' line for the compile step that failed in a torch extension build,
followed by the compile command and the compiler's error, then ninja's CalledProcessError and
'Error compiling objects for extension'. ninja 1.13.2 prints the bare object path (no '[code=N]').

Shown with torch's own BuildExtension and ninja on a one-file C++ extension that does not compile
(verification/cases/_torch_ext.py: torch 2.13.0+cpu, ninja 1.13.2, pip 26.3 -v --no-build-isolation):
the object is broken.o under build/temp.linux-x86_64-cpython-311/, not one of flash-attn's kernel
objects, whose nvcc compile needs a CUDA torch and hours. Fix 1: the fix's grep shows the FAILED line
and the compiler error; MAX_JOBS=1 reaches ninja as -j 1. Fixes 2-3 need flash-attn's GitHub release
wheels or a CUDA build."""

from verification.cases import _torch_ext as t
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 900


def reproduce(ctx):
    lines = t.lines_in_order(ctx, t.build(ctx), "FAILED")
    ctx.expect_error(_venv.raise_tool_message, "ninja", "\n".join(ln.strip() for ln in lines), ctx.record["template"])


fix_1 = t.GREP_FIX
fix_2 = t.FLASH_ATTN_WHEEL


def fix_3(ctx):
    ctx.skip("MAX_JOBS, NVCC_THREADS and FLASH_ATTN_CUDA_ARCHS act on nvcc compiling flash-attn's kernels (a CUDA build)")
