"""torch's CalledProcessError for the ninja command of a failed extension build: "Command '['ninja',
'-v']' returned non-zero exit status 1." (MAX_JOBS unset), followed by 'RuntimeError: Error
compiling objects for extension', with the failed step ('FAILED:') and the compiler's error above it.

Shown with torch's own BuildExtension and ninja on a one-file C++ extension that does not compile
(verification/cases/_torch_ext.py: torch 2.13.0+cpu, ninja 1.13.2, pip 26.3 -v --no-build-isolation),
not with xformers: its xformers._C CUDA kernels need a CUDA torch and hours of nvcc. The record's xformers
specifics (setup.py, TORCH_CUDA_ARCH_LIST, the wheels' torch pins) were read, not run.
Fix 1: the fix's grep shows the FAILED line and the compiler error; MAX_JOBS=1 reaches ninja as -j 1.
Fixes 2-3 need a CUDA torch with its xformers wheel, or a CUDA build."""

from verification.cases import _torch_ext as t

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 900


def reproduce(ctx):
    t.expect_wrapper(ctx, "CalledProcessError", "CalledProcessError")


fix_1 = t.XFORMERS_GREP_FIX
fix_2 = t.XFORMERS_WHEEL
fix_3 = t.XFORMERS_CUDA_BUILD
