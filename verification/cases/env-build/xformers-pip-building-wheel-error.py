"""pip's spinner line for a failed xformers wheel build: 'Building wheel for xformers (setup.py) ... error'.

A build that fails fast (as in xformers-build-torch-cuda-mismatch): PyPI's torch 2.5.1 (CUDA 12.4) with
setuptools 80.9.0, wheel 0.45.1 and ninja first (uv, from its cache), this machine's nvcc 13.0, and
`pip install --no-build-isolation xformers==0.0.16` (the PyPI sdist: no cp311 wheel, no pyproject.toml):
setup.py's metadata step passes and the wheel build stops within seconds on torch's CUDA version check.
pip draws the spinner only at a terminal, so pip runs under a pseudo-terminal. Verdict with pip 25.2
('(setup.py)', the legacy route the record's message names); the notes give pip 25.3 and 26.3
('(pyproject.toml)') and what 26.3 writes into a pipe.
Fix 1: the fix's -v log (pip 26.3, through a pipe as `tee` makes it) and its grep: the CUDA mismatch line
is among the 20 lines. Fix 2: the fix's pair from PyPI instead of PyTorch's cu128 index (not reachable
here; PyPI's torch 2.8.0 is the CUDA 12.8 build and xformers 0.0.32.post2 its wheel): `--dry-run
--only-binary xformers` resolves both to wheels, nothing to build. Fix 3 (the README's build, with
TORCH_CUDA_ARCH_LIST=8.6 and MAX_JOBS=4): run with torch 2.14.1 and nvcc 13.0 until the first nvcc
command, its parts checked; compiling xformers (thousands of CUDA files) cannot finish on this machine."""

import os
import re

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
BUILD_ENV = {"TORCH_CUDA_ARCH_LIST": "9.0", "MAX_JOBS": "2"}  # xformers-build-torch-cuda-mismatch's build
GREP = r"Error|error:|FAILED:|mismatches|Killed"  # fix 1's grep -E
README_ENV = {"TORCH_CUDA_ARCH_LIST": "8.6", "MAX_JOBS": "4"}


def failed_build(ctx, *, pip: str = b.PIP, extra=(), tty: bool = False) -> _venv.Run:
    res = b.toolkit_build(ctx, b.XFORMERS_SDIST, pip=pip, extra=extra, tty=tty, env_extra=BUILD_ENV)
    if "Building wheel for xformers" not in res.output:
        ctx.skip(f"pip did not get to building the wheel: {res.tail(400)}")
    return res


def _spinner(res) -> str:
    return next((" ".join(ln.split()) for ln in res.output.splitlines() if ln.strip().startswith("Building wheel for")),
                "(no spinner line)")


def reproduce(ctx):
    for pip in ("25.3", b.PIP):
        ctx.note(f"pip {pip} at a terminal: {_spinner(failed_build(ctx, pip=pip, tty=True))!r}")
    piped = failed_build(ctx)
    ctx.note(f"pip {b.PIP} into a pipe: "
             + repr(next((" ".join(ln.split()) for ln in piped.output.splitlines() if "finished with status" in ln
                          and "Building wheel" in ln), "")))
    res = failed_build(ctx, pip="25.2", tty=True)
    ctx.note(f"pip 25.2 at a terminal: {_spinner(res)!r}")
    ctx.expect_error(_venv.raise_tool_message, "pip", _spinner(res), ctx.record["template"])
    if "(setup.py)" not in _spinner(res):
        raise AssertionError(f"pip 25.2 did not take the setup.py route: {_spinner(res)!r}")


def fix_1(ctx):
    res = failed_build(ctx, extra=("-v",))
    hits = [ln.strip() for ln in res.output.splitlines() if re.search(GREP, ln)][:20]
    cause = next((h for h in hits if "mismatches" in h), None)
    if cause is None:
        raise AssertionError(f"the fix's grep does not show the cause in its 20 lines: {hits}")
    ctx.note(f"grep: {len(hits)} lines, line {hits.index(cause) + 1} is the cause: {cause[:200]}")


def fix_2(ctx):
    res = b.fresh_install(ctx, "xformers==0.0.32.post2",
                          extra=("--dry-run", "--only-binary", "xformers", "torch==2.8.0"))

    def resolves_to_wheels():
        would = next((ln for ln in res.output.splitlines() if ln.startswith("Would install")), "")
        if res.returncode != 0 or "xformers-0.0.32.post2" not in would or "torch-2.8.0" not in would:
            raise AssertionError(f"pip did not resolve the pair: {res.tail(600)}")
        if "Building wheel" in res.output:
            raise AssertionError("pip built something")
        return would

    ctx.note("PyPI instead of the fix's PyTorch index (not reachable here): " + ctx.call(resolves_to_wheels)[:300])


def fix_3(ctx):
    env = {"CUDA_HOME": b.TOOLKIT, "PATH": f"{b.TOOLKIT}/bin:" + os.environ.get("PATH", ""), **README_ENV}
    res = b.toolkit_build(ctx, b.XFORMERS_SDIST, torch=b.TORCH_CU130, env_extra=env, extra=("-v",),
                          stop_at=r"nvcc.*-gencode")
    if "Building wheel for xformers" not in res.output:
        ctx.skip(f"pip did not get to building the wheel: {res.tail(400)}")

    def readme_parts():
        if "mismatches the version that was used to compile" in res.output:
            raise AssertionError("torch refused the toolkit")
        nvcc = [ln for ln in res.output.splitlines() if "nvcc" in ln and "-gencode" in ln]
        if not nvcc:
            raise AssertionError(f"no nvcc command was printed: {_venv.last_exception(res.output, 300)}")
        archs = sorted(set(re.findall(r"-gencode[= ]+(arch=\S+)", nvcc[0])))
        if archs != ["arch=compute_86,code=sm_86"]:
            raise AssertionError(f"TORCH_CUDA_ARCH_LIST=8.6 gave the nvcc command {archs}")
        ctx.note(f"torch's CUDA check passed (13.0 and 13.0); the first nvcc command has -gencode {archs[0]} only")

    ctx.call(readme_parts)
    ctx.skip("the README's steps were checked up to the first nvcc command (notes); compiling xformers' CUDA "
             "kernels takes hours on this machine's two cores, so whether the build then finishes was not run")
