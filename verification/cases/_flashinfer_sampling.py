"""FlashInfer's sampling module JIT-built with this machine's CUDA 13.0 toolkit, which has no cuRAND
headers (env-build FlashInfer JIT records).

/usr/local/cuda-13.0 here is assembled from NVIDIA's pip wheels (nvcc, crt, cccl, the runtime, nvvm,
cupti, ...; its dist-info folder lists them) without nvidia-curand, so it has nvcc and the runtime headers
but no curand_kernel.h: the "toolkit installed only partly" of flashinfer-jit-curand-header-missing, as
found, nothing removed. FlashInfer's sampling kernels (csrc/sampling.cu, via include/flashinfer/sampling.cuh)
include that header. The JIT runs through _flashinfer_jit.run (a pure-Python flashinfer-python wheel next to
a CPU-only torch; FLASHINFER_CUDA_ARCH_LIST given, since no GPU is visible; the workspace under the runner's
temporary root). One build per release and set of variables per worker; the steps share it."""

from __future__ import annotations

from verification.cases import _builds as b
from verification.cases import _flashinfer_jit as fi
from verification.cases import _venv

CUDA = "/usr/local/cuda-13.0"
ARCHS = "9.0a"
BUILD = (fi.SPEC.replace("from flashinfer.jit.activation import gen_act_and_mul_module\n"
                         "spec = gen_act_and_mul_module('silu')\n",
                         "from flashinfer.jit.sampling import gen_sampling_module\nspec = gen_sampling_module()\n")
         + "spec.build_and_load()\nprint('built')\n")
CURAND = "nvidia-curand-cu12"  # the wheel fix 2 of flashinfer-jit-curand-header-missing names

_runs: dict[tuple, _venv.Run] = {}


def toolkit_note(ctx) -> None:
    import os

    has = os.path.exists(f"{CUDA}/include/curand_kernel.h")
    ctx.note(f"CUDA_HOME={CUDA}: nvcc {b.nvcc_release(CUDA)}; include/curand_kernel.h "
             + ("present" if has else "absent"))
    if has:
        ctx.skip(f"{CUDA} has cuRAND's headers: the record's partial toolkit is not this machine's")


def build(ctx, version: str, **extra_env: str) -> _venv.Run:
    """FlashInfer `version` JIT-building its sampling module, with `extra_env` set."""
    toolkit_note(ctx)
    key = (version, tuple(sorted(extra_env.items())))
    if key not in _runs:
        ws = fi.workspace(f"sampling-{version}-{len(_runs)}")
        _runs[key] = fi.run(ctx, version, BUILD, arch_list=ARCHS, cuda_home=CUDA, ws=ws, timeout=1500,
                            extra_env=extra_env or None)
    else:
        ctx.note("(the build's output is shared with another step of this run)")
    res = _runs[key]
    ctx.note(f"flashinfer {version}, gen_sampling_module().build_and_load(), FLASHINFER_CUDA_ARCH_LIST={ARCHS}"
             + "".join(f", {k}={v}" for k, v in sorted(extra_env.items())) + ": " + res.summary().split(": ", 1)[-1])
    return res


def curand_include(ctx) -> str:
    """The include folder of the nvidia-curand-cu12 wheel, installed with pip --target, found the way the
    fix finds it (nvidia.curand.__path__)."""
    env = b.with_cpu_torch(ctx)
    folder = b.target_dir(ctx, CURAND, no_deps=True, env=env)
    res = b.run_with_torch(ctx, "import nvidia.curand, os; print(os.path.join(list(nvidia.curand.__path__)[0], 'include'))",
                           env=env, path=[folder])
    path = res.output.strip().splitlines()[-1] if res.output.strip() else ""
    if not path.endswith("include"):
        ctx.skip(f"could not locate {CURAND}'s headers: {res.tail(300)}")
    ctx.note(f"{CURAND} (pip --target) headers at {path}")
    return path


def grep_lines(output: str, pattern: str, limit: int = 10) -> list[str]:
    """grep -m <limit> -E <pattern> over the output."""
    import re

    found = [line for line in output.splitlines() if re.search(pattern, line)]
    return found[:limit]


def verbose_names_the_cause(ctx, version: str, pattern: str, *, failed_line: bool) -> None:
    """The fix "rebuild with FLASHINFER_JIT_VERBOSE=1 and grep the log": the first ten lines
    matching `pattern` must hold the compiler's fatal error (and ninja's FAILED: line when
    `failed_line`)."""
    res = build(ctx, version, FLASHINFER_JIT_VERBOSE="1")
    lines = grep_lines(res.output, pattern)
    ctx.note(f"grep -m 10 -E '{pattern}': " + " | ".join(ln.strip()[:160] for ln in lines))

    def names_the_cause():
        if failed_line and not any(ln.lstrip().startswith("FAILED:") for ln in lines):
            raise AssertionError("no FAILED: line among the first ten matches")
        if not any("fatal error" in ln for ln in lines):
            raise AssertionError("the compiler's fatal error is not among the first ten matches")
    ctx.call(names_the_cause)
