"""FlashInfer's JIT wrapper line "Ninja build failed. Ninja output:" when a kernel module does not compile.

flashinfer-python 0.6.1 (a release the record read) JIT-builds its sampling module with this machine's
CUDA 13.0 toolkit, which has no cuRAND headers (verification/cases/_flashinfer_sampling.py): one of the
causes the record lists. Reproduce: the RuntimeError FlashInfer raises, whose text starts with the record's
line and goes on with ninja's output. Fix 1: the same build with FLASHINFER_JIT_VERBOSE=1, read with the
fix's grep (-m 10 -E 'FAILED:|error|fatal'): the lines include the failing nvcc command and the compiler's
fatal error, the cause the wrapper hides. Fix 3's variable and check, with this machine's toolkit as
CUDA_HOME, are what show the missing header (noted); a toolkit with cuRAND is not here: skipped. Fixes 2
(SGLang), 4 (prebuilt kernels from flashinfer.ai's index, out of reach) and 5 (a killed compiler) are not
run."""

import os

from verification.cases import _flashinfer_sampling as fs
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 2400
VERSION = "0.6.1"


def reproduce(ctx):
    res = fs.build(ctx, VERSION)
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"], "RuntimeError")


def fix_1(ctx):
    fs.verbose_names_the_cause(ctx, VERSION, r"FAILED:|error|fatal", failed_line=True)


def fix_2(ctx):
    ctx.skip("SGLang launch with --attention-backend triton --sampling-backend pytorch: not run here")


def fix_3(ctx):
    ctx.note(f"`ls $CUDA_HOME/include/curand_kernel.h` with CUDA_HOME={fs.CUDA}: "
             + ("present" if os.path.exists(f"{fs.CUDA}/include/curand_kernel.h") else "No such file"))
    ctx.skip("needs a complete CUDA toolkit (12.9 or another with cuRAND's headers); this machine has only the partial 13.0 one")


def fix_4(ctx):
    ctx.skip("flashinfer-jit-cache comes from flashinfer.ai's index, out of reach here")


def fix_5(ctx):
    ctx.skip("for a compiler killed for memory; this build's failure is a missing header")
