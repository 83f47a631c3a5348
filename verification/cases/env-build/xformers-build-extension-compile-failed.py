"""torch's 'RuntimeError: Error compiling objects for extension', the last line of a failed extension
build, raised from ninja's CalledProcessError; with a setup.py build (BuildExtension passes
verbose=True, torch 2.13.0 cpp_extension.py lines 1039/1270) ninja's output streams into the log and
the message is the bare prefix, with the 'FAILED:' step and the compiler's error above it.

Shown with torch's own BuildExtension and ninja on a one-file C++ extension that does not compile
(verification/cases/_torch_ext.py: torch 2.13.0+cpu, ninja 1.13.2, pip 26.3 -v --no-build-isolation),
not with xformers: its xformers._C CUDA kernels need a CUDA torch and hours of nvcc. The record's xformers
specifics were read, not run. Fix 1: the fix's grep shows the FAILED line and the compiler error;
MAX_JOBS=1 reaches ninja as -j 1. Fixes 2-3 need a CUDA torch with its xformers wheel, or a CUDA build."""

from errkb.verify.case import Refuted
from verification.cases import _torch_ext as t
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 900
FIX_GREP = ("-n", "-m", "20", "-E", r"FAILED:|error|Killed|died due to|Filename longer")


def reproduce(ctx):
    res = t.build(ctx)
    lines = res.output.splitlines()
    failed, error = t.line_no(lines, r"^\s*FAILED: "), t.line_no(lines, r"error:")
    called = t.line_no(lines, r"CalledProcessError: Command '\['ninja'")
    runtime = t.line_no(lines, r"RuntimeError: Error compiling objects for extension")
    ctx.note(f"line numbers: FAILED {failed}, compiler error {error}, CalledProcessError {called}, RuntimeError {runtime}"
             + (f"; the line: {lines[runtime].strip()!r}" if runtime >= 0 else ""))
    if runtime >= 0 and not (0 <= failed < called < runtime and 0 <= error < called):
        ctx.observed = {"class": None, "message": lines[runtime].strip(), "order": [failed, error, called, runtime]}
        raise Refuted("the RuntimeError does not follow the failed step, the compiler error and ninja's CalledProcessError")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"], "RuntimeError")


def fix_1(ctx):
    t.grep_fix(ctx, *FIX_GREP)


def fix_2(ctx):
    ctx.skip("installs xformers' wheel with a CUDA torch from PyTorch's cu128 index (no CUDA torch here)")


def fix_3(ctx):
    ctx.skip("TORCH_CUDA_ARCH_LIST, MAX_JOBS and a matching nvcc act on compiling xformers' CUDA kernels (a CUDA build)")
