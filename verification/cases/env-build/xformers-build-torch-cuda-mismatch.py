"""torch's extension builder refuses a toolkit of another CUDA major version when xformers' wheel build
starts compiling: "The detected CUDA version (13.0) mismatches the version that was used to compile
PyTorch (12.4). ..."

Reproduce: PyPI's torch 2.5.1 (CUDA 12.4) and the build tools first (uv, from its cache), this machine's
nvcc 13.0 at /usr/local/cuda, then `pip install --no-build-isolation xformers==0.0.16` (pip 26.3; an
old pin with no wheel for CPython 3.11, so pip builds the sdist, the record's first situation):
setup.py's metadata step passes and the wheel build stops within seconds on torch's check.
Fix 1: its pair from one index, run against PyPI (download.pytorch.org is out of reach here; PyPI's
0.0.28.post3 wheel is the CUDA 12.4 build for torch 2.5.1): `pip install --dry-run --only-binary xformers
torch==2.5.1 xformers==0.0.28.post3` next to torch 2.5.1 resolves to the wheel, nothing to build.
Fix 2 (CUDA_HOME at a toolkit of torch's major version, --no-build-isolation) and fix 3 (the torch build
for the toolkit you have): torch 2.14.1 (CUDA 13.0) with CUDA_HOME=/usr/local/cuda-13.0; the same 0.0.16
sdist stands in for the fix's git URL (GitHub is out of reach): torch's check passes and the build starts
compiling (stopped there). No CUDA 12 nvcc exists here or on PyPI, so fixes 2 and 3 are shown by the
same pair, made on torch's side; fix 2's notes say so."""

from verification.cases import _builds as b

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1500
BUILD_ENV = {"TORCH_CUDA_ARCH_LIST": "9.0", "MAX_JOBS": "2"}


def reproduce(ctx):
    res = b.toolkit_build(ctx, b.XFORMERS_SDIST, env_extra=BUILD_ENV)
    if "Building wheel for xformers" not in res.output:
        ctx.skip(f"pip did not get to building the wheel: {res.tail(400)}")
    ctx.expect_error(b.mismatch_in, res.output, ctx.record["template"])


def fix_1(ctx):
    env = b.cuda_torch_env(ctx)
    res = env.pip("install", "--dry-run", "--only-binary", "xformers", "torch==2.5.1", "xformers==0.0.28.post3", timeout=600)

    def resolves():
        would = [ln for ln in res.output.splitlines() if ln.startswith("Would install")]
        if res.returncode != 0 or not would or "Building wheel" in res.output:
            raise AssertionError(f"pip did not resolve a wheel: {res.tail(600)}")
        return would[0]

    ctx.note("PyPI instead of the fix's PyTorch index (not reachable here): " + ctx.call(resolves))


def fix_2(ctx):
    ctx.note("the toolkit and torch agree on CUDA 13.0 because torch was changed: no CUDA 12 nvcc is on this "
             "machine or on PyPI (nvidia-cuda-nvcc-cu12 wheels carry ptxas only); the 0.0.16 sdist stands in for the git URL")
    res = b.matched_toolkit_build(ctx, b.XFORMERS_SDIST, "xformers", BUILD_ENV)
    ctx.call(b.compiles_past_check, ctx, res, ctx.record["template"])


def fix_3(ctx):
    res = b.matched_toolkit_build(ctx, b.XFORMERS_SDIST, "xformers", BUILD_ENV)
    ctx.call(b.compiles_past_check, ctx, res, ctx.record["template"])
