"""pip's closing line after an xformers wheel build failed: 'Failed to build installable wheels for
some pyproject.toml based projects'.

The line comes only when the wheel build itself fails: an isolated build of the 0.0.16 sdist with
no torch stops earlier, at 'Getting requirements to build wheel' (pip 24.2, 25.1: that box; pip
26.3: "Failed to build '...' when getting requirements to build wheel"), which is
xformers-pip-get-requires-failed. So the reproduce step takes the record's last fix as a user
would: torch 2.14.1 (PyPI, CUDA 13.0) and the build tools installed first, TORCH_CUDA_ARCH_LIST=9.0
and MAX_JOBS=2, then `pip install --no-build-isolation xformers==0.0.16` (no cp311 wheel: the
sdist; an old pin next to a new torch, the record's last situation). setup.py's metadata step
passes, the CUDA compile fails within seconds on this machine (its /usr/local/cuda has nvcc but not
cuSPARSE's headers: "fatal error: cusparse.h"), and pip prints the line. Run with pip 26.3 (the
verdict), 25.1 and 24.2 (the wording the record gives per release is checked in the notes).
Fix 1: the fix's grep on the -v log finds the compile error among its first 20 lines. Fix 2 uses
the PyTorch index (not reachable here). Fix 3: its `pip debug` line runs, and a release with an
abi3 wheel (0.0.32.post2) resolves to a wheel on this Python (--dry-run --no-deps). Fix 4 is a full CUDA
build (the reproduce step is its recipe on 0.0.16; a build that succeeds takes an hour or more)."""

import re

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1500
BUILD_ENV = {"TORCH_CUDA_ARCH_LIST": "9.0", "MAX_JOBS": "2"}
_done: dict = {}


def _build(ctx, pip: str, *extra):
    key = (pip, extra)
    env = b.with_torch(ctx)
    if key not in _done:
        argv = [*b.pip_argv(ctx, env, pip), "install", *extra, "--no-build-isolation", "--no-deps", b.XFORMERS_SDIST]
        _done[key] = _venv.run(argv, env=_venv.tool_env(VIRTUAL_ENV=str(env.path), **BUILD_ENV), timeout=1200)
    res = _done[key]
    _venv.noted(ctx, env)
    ctx.note(f"pip {pip}, TORCH_CUDA_ARCH_LIST=9.0 MAX_JOBS=2: " + res.summary())
    if "Building wheel for xformers" not in res.output:
        ctx.skip(f"pip did not get to building the wheel: {res.tail(400)}")
    return res


def _wording(res) -> str:
    line = next((ln for ln in res.output.splitlines() if "Failed to build installable wheels" in ln), "")
    after = res.output.split(line, 1)[1].lstrip().splitlines()[:1] if line else []
    return " ".join(line.split()) + (" / " + after[0].strip() if after else "")


def reproduce(ctx):
    claims = {"24.2": r"^ERROR: ERROR: Failed to build installable wheels .* \(xformers\)$",
              "25.1": r"^ERROR: Failed to build installable wheels .* \(xformers\)$",
              "26.3": r"^× Failed to build installable wheels for some pyproject\.toml based projects / ╰─> xformers$"}
    for pip in ("24.2", "25.1"):
        res = _build(ctx, pip)
        said = _wording(res)
        ctx.note(f"pip {pip} closing line: {said!r}")
        if not re.search(claims[pip], said):
            raise AssertionError(f"pip {pip} wording differs from the record: {said!r}")
    res = _build(ctx, b.PIP)
    said = _wording(res)
    ctx.note(f"pip {b.PIP} closing line: {said!r}")
    if not re.search(claims["26.3"], said):
        raise AssertionError(f"pip {b.PIP} wording differs from the record: {said!r}")
    ctx.expect_error(_venv.raise_tool_message, "pip", res.output, ctx.record["template"])


def fix_1(ctx):
    res = _build(ctx, b.PIP, "-v")
    pattern = re.compile(r"error:|Error|FAILED:|mismatches|Killed|not found")
    hits = [ln.strip() for ln in res.output.splitlines() if pattern.search(ln)][:20]
    cause = next((h for h in hits if "fatal error" in h or h.startswith("FAILED:")), None)
    if cause is None:
        raise AssertionError(f"the fix's grep shows no compile error in its first 20 lines: {hits}")
    ctx.note(f"{len(hits)} lines; the compile error: {cause[:240]}")


def fix_2(ctx):
    ctx.skip("installs from download.pytorch.org, which this machine cannot reach")


def fix_3(ctx):
    env = b.with_torch(ctx)
    tags = env.pip("debug", "--verbose", timeout=120)
    found = [ln.strip() for ln in tags.output.splitlines() if re.search(r"manylinux_2_28|cp313|abi3", ln)][:5]
    if tags.returncode != 0 or not found:
        raise AssertionError(f"pip debug listed none of the tags the fix greps for: {tags.tail(400)}")
    ctx.note("pip debug --verbose: " + "; ".join(found))
    res = b.fresh_install(ctx, "xformers==0.0.32.post2", extra=("--dry-run", "--no-deps", "--only-binary", "xformers"))
    if "incomplete-download" in res.output or "Connection" in res.output:
        raise RuntimeError(f"network failure, no verdict: {res.tail(300)}")

    def resolves():
        would = [ln for ln in res.output.splitlines() if ln.startswith("Would install")]
        if res.returncode != 0 or not would or "Building wheel" in res.output:
            raise AssertionError(f"pip did not resolve a wheel: {res.tail(600)}")
        return would[0]

    ctx.note(ctx.call(resolves) + " (from a wheel; --no-deps: its torch==2.8.0 is not downloaded)")


def fix_4(ctx):
    ctx.skip("a CUDA build of xformers that succeeds compiles thousands of files (an hour or more); "
             "the reproduce step ran this recipe on 0.0.16 and it stopped on this machine's incomplete toolkit")
