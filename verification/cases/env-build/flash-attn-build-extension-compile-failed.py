"""torch's 'RuntimeError: Error compiling objects for extension', the last line of a failed extension
build, raised from ninja's CalledProcessError; with a setup.py build (BuildExtension passes
verbose=True, torch 2.13.0 cpp_extension.py lines 1039/1270) ninja's output streams into the log and
the message is the bare prefix, with the 'FAILED:' step and the compiler's error above it.

Shown with torch's own BuildExtension and ninja on a one-file C++ extension that does not compile
(verification/cases/_torch_ext.py: torch 2.13.0+cpu, ninja 1.13.2, pip 26.3 -v --no-build-isolation),
not with flash-attn: its CUDA kernels need a CUDA torch and hours of nvcc. The record's flash-attn
specifics were read, not run. Fix 1: the fix's grep shows the FAILED line and the compiler error;
MAX_JOBS=1 reaches ninja as -j 1. Fixes 2-4 need flash-attn's GitHub release wheels or a CUDA build."""

from verification.cases import _torch_ext as t

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 900


reproduce = t.COMPILING_REPRODUCE
fix_1 = t.GREP_FIX
fix_2 = t.FLASH_ATTN_WHEEL
fix_3 = t.FLASH_ATTN_JOBS
fix_4 = t.FLASH_ATTN_ARCHS
