"""torch's extension builder refuses a toolkit of another CUDA major version when flash-attn's wheel
build starts compiling: "The detected CUDA version (13.0) mismatches the version that was used to
compile PyTorch (12.4). ..."

Reproduce: PyPI's torch 2.5.1 (CUDA 12.4) and the build tools first (uv, from its cache), this
machine's nvcc 13.0 at /usr/local/cuda, then `pip install --no-build-isolation flash-attn==2.8.3`
(pip 26.3, the PyPI sdist; FLASH_ATTENTION_FORCE_BUILD=TRUE, see _builds.fa_mismatch_build): setup.py's
metadata step passes, and the wheel build stops within seconds on torch's check, before any compile.
Fix 1 (CUDA_HOME at a toolkit of torch's major version) and fix 2 (the torch build for the toolkit you
have): torch 2.14.1 (PyPI's CUDA 13.0 build) with CUDA_HOME=/usr/local/cuda-13.0: the check passes and
the build reaches the compile (stopped there). No CUDA 12 nvcc exists here or on PyPI, so both fixes are shown
by the same pair, made on torch's side; fix 1's notes say so. Fix 3 needs GitHub's release wheels."""

from verification.cases import _builds as b

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1500


def reproduce(ctx):
    res = b.fa_mismatch_build(ctx)
    ctx.expect_error(b.mismatch_in, res.output, ctx.record["template"])


def fix_1(ctx):
    ctx.note("the toolkit and torch agree on CUDA 13.0 because torch was changed: no CUDA 12 nvcc is on this "
             "machine or on PyPI (nvidia-cuda-nvcc-cu12 wheels carry ptxas only)")
    res = b.matched_toolkit_build(ctx, b.FLASH_ATTN, "flash-attn")
    ctx.call(b.compiles_past_check, ctx, res, ctx.record["template"])


def fix_2(ctx):
    res = b.matched_toolkit_build(ctx, b.FLASH_ATTN, "flash-attn")
    ctx.call(b.compiles_past_check, ctx, res, ctx.record["template"])


def fix_3(ctx):
    ctx.skip("installs a release wheel from GitHub (not reachable from here; PyPI has no flash-attn wheels)")


def control(ctx):
    """The build that fails, without the toolkit: setup.py's metadata step alone passes with torch 2.5.1 and nvcc 13.0
    (the mismatch is only checked when compiling starts)."""
    res = b.fa_mismatch_build(ctx)
    if "Preparing metadata" not in res.output or "finished with status 'done'" not in res.output:
        raise AssertionError(f"the metadata step did not pass: {res.tail(400)}")
    ctx.note("setup.py's metadata step passed; the failure came in the wheel build")
