"""A torch C++ extension that does not compile, built by torch's own BuildExtension and ninja through
pip: the wrapper lines every torch source build prints when a compile step fails (ninja's 'FAILED:'
line, torch's CalledProcessError for the ninja command and its 'Error compiling objects for
extension', pip's 'Failed to build ...'). Shared by the env-build records whose message is one of
those wrappers. It builds no flash-attn or xformers kernel: their CUDA compiles need a CUDA torch
and hours of nvcc; the cases say so."""

import re
import subprocess
import tempfile
from pathlib import Path

from verification.cases import _builds as b
from verification.cases import _venv

NAME = "errkb-broken-ext"
SETUP = f'''
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension
setup(name="{NAME}", version="0.0.1",
      ext_modules=[CppExtension("errkb_broken_ext", ["broken.cpp"])],
      cmdclass={{"build_ext": BuildExtension}})
'''
SOURCE = "int errkb_answer() { return value_that_is_not_declared; }\n"

_runs: dict = {}


def build(ctx, max_jobs: str | None = None) -> _venv.Run:
    """`pip install -v --no-build-isolation --no-deps .` of the broken one-file CppExtension in
    b.with_cpu_torch() (MAX_JOBS=`max_jobs` when given); one run per MAX_JOBS value and process."""
    if max_jobs in _runs:
        return _runs[max_jobs]
    env = b.with_cpu_torch(ctx)
    _venv.noted(ctx, env)
    if not _runs:
        ctx.note(f"torch {env.version('torch')}, ninja {env.version('ninja')} (PyPI wheel), "
                 f"setuptools {env.version('setuptools')}, pip {env.version('pip')}")
    project = Path(tempfile.mkdtemp(prefix="errkb-torch-ext-", dir=_venv._tmp_root()))
    (project / "setup.py").write_text(SETUP)
    (project / "broken.cpp").write_text(SOURCE)
    extra = {"MAX_JOBS": max_jobs} if max_jobs else {}
    res = _venv.run([env.python, "-m", "pip", "install", "-v", "--no-build-isolation", "--no-deps", "."],
                    cwd=project, timeout=600, env=_venv.tool_env(VIRTUAL_ENV=str(env.path), **extra))
    ctx.note(f"pip install -v --no-build-isolation . of a one-file CppExtension ({NAME}) that does not compile"
             + (f", MAX_JOBS={max_jobs}" if max_jobs else "") + f": exit status {res.returncode}")
    _runs[max_jobs] = res
    return res


def line_no(lines: list[str], pattern: str) -> int:
    return next((i for i, ln in enumerate(lines) if re.search(pattern, ln)), -1)


# The lines a failed torch extension build prints, in the order it prints them (name, first match).
FAILED = ("FAILED", r"^\s*FAILED: ")
COMPILER_ERROR = ("compiler error", r"error:")
NINJA_STOPPED = ("ninja's line", r"ninja: build stopped: subcommand failed\.")
NINJA_CALLED = ("CalledProcessError", r"CalledProcessError: Command '\['ninja'")
COMPILING = ("RuntimeError", r"RuntimeError: Error compiling objects for extension")
TORCH_BUILD = (FAILED, COMPILER_ERROR, NINJA_CALLED, COMPILING)
FIX_GREP = ("-n", "-m", "10", "-E", r"FAILED:|error|Killed|died due to")  # the fixes' `grep ... build.log`
XFORMERS_FIX_GREP = ("-n", "-m", "20", "-E", r"FAILED:|error|Killed|died due to|Filename longer")  # xFormers' records


def lines_in_order(ctx, res: _venv.Run, subject: str, order=TORCH_BUILD) -> list[str]:
    """The build's output lines, once the record's line (`subject`, a name in `order`) is known to
    sit where a real build prints it: each of `order`'s patterns first matches a later line than
    the one before. Refuted otherwise; a missing record line is left to the step's expect_error."""
    from errkb.verify.case import Refuted

    lines = res.output.splitlines()
    found = {name: line_no(lines, pattern) for name, pattern in order}
    at = found[subject]
    ctx.note("line numbers: " + ", ".join(f"{name} {i}" for name, i in found.items())
             + (f"; the line: {lines[at].strip()[:200]!r}" if at >= 0 else ""))
    numbers = list(found.values())
    if at >= 0 and not (numbers[0] >= 0 and all(a < b for a, b in zip(numbers, numbers[1:]))):
        ctx.observed = {"class": None, "message": lines[at].strip(), "order": numbers}
        raise Refuted(f"the {subject} line is not where a failed build prints it ({' < '.join(found)})")
    return lines


def grep(res: _venv.Run, *args: str) -> list[str]:
    """The fix's `grep <args> build.log`, run on the build's output written to a file."""
    with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False, dir=_venv._tmp_root()) as log:
        log.write(res.output)
    return subprocess.run(["grep", *args, log.name], capture_output=True, text=True).stdout.splitlines()


def grep_fix(ctx, *args: str) -> None:
    """A 'find the first real error above the traceback' fix: the fix's grep over the build log shows
    the failed step and the compiler's error, and MAX_JOBS=1 reaches ninja as '-j 1'."""
    from errkb.verify.case import Refuted

    shown = grep(build(ctx), *args)
    ctx.note(f"grep {' '.join(args[:-1])} {args[-1]!r}: " + " | ".join(s[:140] for s in shown[:4]))
    failed = next((i for i, s in enumerate(shown) if "FAILED:" in s), None)
    error = next((i for i, s in enumerate(shown) if "error:" in s and "FAILED:" not in s), None)
    if failed is None or error is None:
        ctx.observed = {"class": None, "message": None, "grep": shown}
        raise Refuted("the grep does not show the failed step and the compiler's error")
    one = build(ctx, "1")
    ninja_cmd = [ln.strip() for ln in one.output.splitlines() if "CalledProcessError: Command '['ninja'" in ln]
    ctx.note(f"with MAX_JOBS=1: {ninja_cmd[:1]}")
    if not ninja_cmd or "'-j', '1'" not in ninja_cmd[0]:
        ctx.observed = {"class": None, "message": None, "ninja": ninja_cmd[:1]}
        raise Refuted("MAX_JOBS=1 did not reach ninja as -j 1")


def expect_wrapper(ctx, subject: str, error_class: str, max_jobs: str | None = None) -> None:
    """A reproduce step for a record whose message is torch's exception `subject` (a name in
    TORCH_BUILD) of class `error_class`: it must sit where a failed build prints it."""
    res = build(ctx, max_jobs)
    lines_in_order(ctx, res, subject)
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"], error_class)


def _wrapper_step(subject: str, error_class: str):
    def step(ctx):
        expect_wrapper(ctx, subject, error_class)
    return step


def _grep_step(*args: str):
    def step(ctx):
        grep_fix(ctx, *args)
    return step


# steps several records share (bound by name in their case files: `fix_1 = t.GREP_FIX`)
COMPILING_REPRODUCE = _wrapper_step("RuntimeError", "RuntimeError")  # torch's "Error compiling objects for extension"
GREP_FIX = _grep_step(*FIX_GREP)
XFORMERS_GREP_FIX = _grep_step(*XFORMERS_FIX_GREP)


def skipped(reason: str):
    """A fix step that cannot run on this machine: skipped, with `reason`."""
    def step(ctx):
        ctx.skip(reason)
    return step


# the fixes these records share that need what this machine lacks
FLASH_ATTN_WHEEL = skipped("installs a release wheel from flash-attn's GitHub releases for a CUDA torch (not reachable here)")
FLASH_ATTN_JOBS = skipped("fewer MAX_JOBS/NVCC_THREADS matter for nvcc compiling flash-attn's kernels (a CUDA build)")
FLASH_ATTN_ARCHS = skipped("FLASH_ATTN_CUDA_ARCHS and CUDA_HOME act on nvcc compiling flash-attn's kernels (a CUDA build)")
XFORMERS_WHEEL = skipped("installs xformers' wheel with a CUDA torch from PyTorch's cu128 index (no CUDA torch here)")
XFORMERS_CUDA_BUILD = skipped("TORCH_CUDA_ARCH_LIST, MAX_JOBS and a matching nvcc act on compiling xformers' CUDA "
                              "kernels (a CUDA build)")

