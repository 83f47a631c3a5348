"""torch's CalledProcessError for the ninja command of a failed extension build: "Command '['ninja',
'-v', '-j', '4']' returned non-zero exit status 1." (MAX_JOBS=4), followed by 'RuntimeError: Error
compiling objects for extension', with the failed step ('FAILED:') and the compiler's error above it.

Shown with torch's own BuildExtension and ninja on a one-file C++ extension that does not compile
(verification/cases/_torch_ext.py: torch 2.13.0+cpu, ninja 1.13.2, pip 26.3 -v --no-build-isolation),
not with flash-attn: its CUDA kernels need a CUDA torch and hours of nvcc. The record's flash-attn
specifics (setup.py's release-wheel download, MAX_JOBS default, FLASH_ATTN_CUDA_ARCHS) were read, not run.
Fix 1: the fix's grep shows the FAILED line and the compiler error; MAX_JOBS=1 reaches ninja as -j 1.
Fixes 2-4 need flash-attn's GitHub release wheels or a CUDA build."""

from errkb.verify.case import Refuted
from verification.cases import _torch_ext as t
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 900


def reproduce(ctx):
    res = t.build(ctx, "4")
    lines = res.output.splitlines()
    failed, called = t.line_no(lines, r"^\s*FAILED: "), t.line_no(lines, r"CalledProcessError: Command '\['ninja'")
    runtime = t.line_no(lines, r"RuntimeError: Error compiling objects for extension")
    ctx.note(f"line numbers: FAILED {failed}, CalledProcessError {called}, RuntimeError {runtime}")
    if called >= 0 and not (0 <= failed < called < runtime):
        ctx.observed = {"class": None, "message": lines[called].strip(), "order": [failed, called, runtime]}
        raise Refuted("the CalledProcessError is not between the failed step and torch's RuntimeError")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"], "CalledProcessError")


def fix_1(ctx):
    t.grep_fix(ctx, "-n", "-m", "10", "-E", r"FAILED:|error|Killed|died due to")


def fix_2(ctx):
    ctx.skip("installs a release wheel from flash-attn's GitHub releases for a CUDA torch (not reachable here)")


def fix_3(ctx):
    ctx.skip("fewer MAX_JOBS/NVCC_THREADS matter for nvcc compiling flash-attn's kernels (a CUDA build)")


def fix_4(ctx):
    ctx.skip("FLASH_ATTN_CUDA_ARCHS and CUDA_HOME act on nvcc compiling flash-attn's kernels (a CUDA build)")
