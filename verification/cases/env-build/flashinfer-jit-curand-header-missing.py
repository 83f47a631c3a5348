"""FlashInfer's JIT with a CUDA toolkit that has no cuRAND headers: "fatal error: curand_kernel.h: No such
file or directory".

flashinfer-python 0.6.1 (a release the record read) JIT-builds its sampling module with CUDA_HOME set to
this machine's CUDA 13.0 toolkit, which is made of NVIDIA's pip wheels without nvidia-curand
(verification/cases/_flashinfer_sampling.py), targets from FLASHINFER_CUDA_ARCH_LIST=9.0a.

Reproduce: the compiler's fatal line, read from ninja's output inside FlashInfer's error. Fix 1 (a full
toolkit) has no second toolkit here: skipped. Fix 2: nvidia-curand-cu12 installed and its include folder
passed through FLASHINFER_EXTRA_CUDAFLAGS exactly as the fix writes it: the build no longer stops on the
header (the step reports how far it got: the objects compile, and this machine's toolkit then lacks
libcuda's stub for the link, noted when that is the end). Fix 3 is SGLang's sampling backend: not run."""

from verification.cases import _flashinfer_sampling as fs
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 2400
VERSION = "0.6.1"


def reproduce(ctx):
    res = fs.build(ctx, VERSION)
    ctx.expect_error(_venv.raise_tool_message, "nvcc", res.output, ctx.record["template"])


def fix_1(ctx):
    ctx.skip("needs a complete (devel) CUDA toolkit with cuRAND's headers; this machine has only the partial one (fix 2 adds the headers)")


def fix_2(ctx):
    flags = "-I" + fs.curand_include(ctx)
    res = fs.build(ctx, VERSION, FLASHINFER_EXTRA_CUDAFLAGS=flags)
    objects = [ln for ln in res.output.splitlines() if ".cuda.o" in ln and "FAILED" not in ln]
    ctx.note(f"{len(objects)} ninja lines naming .cuda.o objects; last lines: "
             + " | ".join(ln.strip()[:160] for ln in res.output.strip().splitlines()[-3:]))

    def past_the_header():
        if _venv.tool_message(res.output, ctx.record["template"]) is not None:
            raise AssertionError("the build still stops on a missing cuRAND header")
        if "built" in res.output:
            return
        failed = fs.grep_lines(res.output, r"FAILED:")
        if any(".cuda.o" in ln for ln in failed):
            raise AssertionError(f"a compile still fails: {failed[:2]} {res.tail(600)}")
        if not failed:
            raise AssertionError(f"the build did not finish: {res.tail(600)}")
        ctx.note("the compile steps passed; the build stopped at: " + failed[0][:200])
    ctx.call(past_the_header)


def fix_3(ctx):
    ctx.skip("SGLang's --sampling-backend pytorch: a server launch, not run here")
