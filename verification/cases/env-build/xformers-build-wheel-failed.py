"""pip's 'Failed building wheel for xformers' after a failed xformers build.

The build that fails fast (as in xformers-build-torch-cuda-mismatch): PyPI's torch 2.5.1 (CUDA 12.4) and
the build tools first (uv, from its cache), this machine's nvcc 13.0, `pip install --no-build-isolation
xformers==0.0.16` with pip 26.3 (the PyPI sdist: no cp311 wheel): the wheel build stops within seconds on
torch's CUDA version check. Reproduce: pip prints the record's line, after the build output that holds the
cause (torch's mismatch line comes first). Fix 1: the fix's pair from PyPI instead of PyTorch's cu124
index (not reachable here; PyPI's torch 2.5.1 is the CUDA 12.4 build and xformers 0.0.28.post3 its wheel):
`--dry-run` resolves both to wheels, nothing to build. Fix 2: `--only-binary xformers` makes pip refuse to
compile: an unpinned xformers resolves to a wheel for this Python (--dry-run), and the 0.0.16 pin, which
has no cp311 wheel, stops at once on 'No matching distribution' instead of building. Fix 3: the fix's -v
log of the same failed build (through a pipe, as `tee` makes it) and its grep -m 20 show torch's
RuntimeError among the 20 lines, above pip's line; the fix's "build against your own torch" is the
--no-build-isolation the build already has."""

import re

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
BUILD_ENV = {"TORCH_CUDA_ARCH_LIST": "9.0", "MAX_JOBS": "2"}  # xformers-build-torch-cuda-mismatch's build
GREP = r"FAILED:|error:|Error|Filename longer"  # fix 3's grep -E


def failed_build(ctx, *, extra=()) -> _venv.Run:
    res = b.toolkit_build(ctx, b.XFORMERS_SDIST, extra=extra, env_extra=BUILD_ENV)
    if "Building wheel for xformers" not in res.output:
        ctx.skip(f"pip did not get to building the wheel: {res.tail(400)}")
    return res


def _line(lines, pattern) -> int:
    return next((i for i, ln in enumerate(lines) if re.search(pattern, ln)), -1)


def reproduce(ctx):
    res = failed_build(ctx)
    lines = res.output.splitlines()
    cause, failed = _line(lines, r"mismatches the version that was used to compile"), _line(lines, r"Failed building wheel for")
    ctx.note(f"line {cause + 1}: torch's mismatch; line {failed + 1}: {lines[failed].strip() if failed >= 0 else '(none)'}")
    if 0 <= failed < cause or cause < 0:
        raise AssertionError("the cause is not in the build output above pip's line")
    ctx.expect_error(_venv.raise_tool_message, "pip", res.output, ctx.record["template"])


def _resolves(res, *wanted: str) -> str:
    would = next((ln for ln in res.output.splitlines() if ln.startswith("Would install")), "")
    if res.returncode != 0 or any(w not in would for w in wanted) or "Building wheel" in res.output:
        raise AssertionError(f"pip did not resolve {wanted} to wheels: {res.tail(600)}")
    return would


def fix_1(ctx):
    res = b.fresh_install(ctx, "xformers==0.0.28.post3", extra=("--dry-run", "--only-binary", "xformers", "torch==2.5.1"))
    ctx.note("PyPI instead of the fix's PyTorch index (not reachable here): "
             + ctx.call(_resolves, res, "xformers-0.0.28.post3", "torch-2.5.1")[:300])


def fix_2(ctx):
    res = b.fresh_install(ctx, "xformers", extra=("--dry-run", "--only-binary", "xformers"))
    would = ctx.call(_resolves, res, "xformers-")
    ctx.note("unpinned, PyPI: " + next((w for w in would.split() if w.startswith("xformers-")), would[:200]))
    old = b.fresh_install(ctx, b.XFORMERS_SDIST, extra=("--dry-run", "--only-binary", "xformers"))
    refused = next((ln.strip() for ln in old.output.splitlines() if "No matching distribution" in ln), None)
    ctx.note(f"{b.XFORMERS_SDIST} with --only-binary: " + (refused or old.tail(200)))

    def refuses_to_compile():
        if refused is None or "Building wheel" in old.output or "Preparing metadata" in old.output:
            raise AssertionError(f"pip did not refuse the sdist: {old.tail(400)}")

    ctx.call(refuses_to_compile)


def fix_3(ctx):
    res = failed_build(ctx, extra=("-v",))
    hits = [ln.strip() for ln in res.output.splitlines() if re.search(GREP, ln)][:20]
    ctx.note("grep -m 20 (first five): " + " | ".join(h[:140] for h in hits[:5]))

    def grep_shows_cause():
        if not any(h.startswith("RuntimeError") for h in hits):
            raise AssertionError(f"the grep's 20 lines do not show torch's RuntimeError: {hits}")

    ctx.call(grep_shows_cause)
