"""ninja ends a failed torch extension build with its own line "ninja: build stopped: subcommand failed.",
after the 'FAILED:' step and the compiler's message and before torch's CalledProcessError for the ninja
command; flash-attn's source build goes through the same torch BuildExtension and ninja.

flash-attn's CUDA kernels cannot be compiled to a failure that means anything on this machine in a
step's time (the shared _builds.fa_compile_recipe needs PyPI's CUDA torch and minutes of nvcc on two
cores), so the case builds a one-file C++ extension with the same machinery instead: a setup.py with
torch.utils.cpp_extension.BuildExtension and a CppExtension whose source does not compile, installed with
`pip install -v --no-build-isolation .` (pip 26.3) into b.with_cpu_torch() (torch 2.13.0+cpu, ninja from
PyPI). The record's flash-attn specifics (setup.py's wheel download and its fallback) were read, not run.

Reproduce: the log holds the record's line, after a 'FAILED:' line and the compiler's 'error', and
before the CalledProcessError for the ninja command. Fix 1: the fix's grep, run on that log, shows the
FAILED line and the compiler error among its first ten lines, ahead of ninja's line; MAX_JOBS=1 is
passed to ninja as '-j 1' (torch's _run_ninja_build). Fixes 2-4 need flash-attn's GitHub release
wheels, a GPU build or Windows."""

import re
import subprocess
import tempfile
from pathlib import Path

from errkb.verify.case import Refuted
from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 900

SETUP = '''
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension
setup(name="errkb-broken-ext", version="0.0.1",
      ext_modules=[CppExtension("errkb_broken_ext", ["broken.cpp"])],
      cmdclass={"build_ext": BuildExtension})
'''
SOURCE = "int errkb_answer() { return value_that_is_not_declared; }\n"
GREP = r"FAILED:|error|Killed|died due to"  # the fix's `grep -n -m 10 -E ...`

_runs: dict = {}


def _build(ctx, max_jobs: str | None = None) -> _venv.Run:
    if max_jobs in _runs:
        return _runs[max_jobs]
    env = b.with_cpu_torch(ctx)
    for note in env.notes:
        ctx.note(note)
    if not _runs:
        ctx.note(f"ninja {env.version('ninja')} (PyPI wheel)")
    project = Path(tempfile.mkdtemp(prefix="errkb-ninja-", dir=_venv._tmp_root()))
    (project / "setup.py").write_text(SETUP)
    (project / "broken.cpp").write_text(SOURCE)
    extra = {"MAX_JOBS": max_jobs} if max_jobs else {}
    res = _venv.run([env.python, "-m", "pip", "install", "-v", "--no-build-isolation", "--no-deps", "."],
                    cwd=project, timeout=600, env=_venv.tool_env(VIRTUAL_ENV=str(env.path), **extra))
    ctx.note(f"pip install -v --no-build-isolation . of a one-file CppExtension that does not compile"
             + (f", MAX_JOBS={max_jobs}" if max_jobs else "") + f": exit status {res.returncode}")
    _runs[max_jobs] = res
    return res


def _line(lines: list[str], pattern: str) -> int:
    return next((i for i, ln in enumerate(lines) if re.search(pattern, ln)), -1)


def reproduce(ctx):
    res = _build(ctx)
    lines = res.output.splitlines()
    failed, error = _line(lines, r"^\s*FAILED: "), _line(lines, r"error")
    stopped, called = _line(lines, r"ninja: build stopped: subcommand failed\."), _line(lines, r"CalledProcessError: Command '\['ninja'")
    ctx.note(f"line numbers in the log: FAILED {failed}, first 'error' {error}, ninja's line {stopped}, CalledProcessError {called}")
    if stopped >= 0 and not (0 <= failed < stopped and 0 <= error < stopped and stopped < called):
        ctx.observed = {"class": None, "message": lines[stopped].strip(), "order": [failed, error, stopped, called]}
        raise Refuted("ninja's line is not between the failed step and torch's CalledProcessError")
    ctx.expect_error(_venv.raise_tool_message, "ninja", res.output, ctx.record["template"])


def fix_1(ctx):
    res = _build(ctx)
    with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False, dir=_venv._tmp_root()) as log:
        log.write(res.output)
    grep = subprocess.run(["grep", "-n", "-m", "10", "-E", GREP, log.name], capture_output=True, text=True)
    shown = grep.stdout.splitlines()
    ctx.note("the grep's first lines: " + " | ".join(s[:140] for s in shown[:4]))
    first_failed = next((i for i, s in enumerate(shown) if "FAILED:" in s), None)
    first_error = next((i for i, s in enumerate(shown) if "error" in s and "FAILED:" not in s), None)
    if first_failed is None or first_error is None:
        ctx.observed = {"class": None, "message": None, "grep": shown}
        raise Refuted("the grep does not show the failed step and the compiler's error")
    one = _build(ctx, "1")
    ninja_cmd = [ln.strip() for ln in one.output.splitlines() if "CalledProcessError: Command '['ninja'" in ln]
    ctx.note(f"with MAX_JOBS=1: {ninja_cmd[:1]}")
    if not ninja_cmd or "'-j', '1'" not in ninja_cmd[0]:
        ctx.observed = {"class": None, "message": None, "ninja": ninja_cmd[:1]}
        raise Refuted("MAX_JOBS=1 did not reach ninja as -j 1")


def fix_2(ctx):
    ctx.skip("installs a release wheel from flash-attn's GitHub releases (not reachable from here)")


def fix_3(ctx):
    ctx.skip("lowering MAX_JOBS/NVCC_THREADS matters for nvcc compiling flash-attn's kernels (a CUDA build)")


fix_4 = b.windows_fix
