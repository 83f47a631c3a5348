"""FlashInfer 0.2.x's JIT-built torch ops on a machine without a GPU, for records about how a caller's
argument list meets an op's schema (torch's binder checks the count before anything is dispatched).

flashinfer-python 0.2.x is published on PyPI as sdists only (its AOT wheels are on flashinfer.ai, out of
reach here); the sdist installs FlashInfer's Python package with its CUDA sources, and each kernel module
is compiled with nvcc on first use and registered as torch ops under the module's name. Here the
compile runs with this machine's CUDA 13.0 toolkit (_builds.TOOLKIT) for sm_90 (TORCH_CUDA_ARCH_LIST=9.0)
next to torch 2.11.0+cu130, the torch of the lent H200's image and the one PyPI torch whose CUDA major
matches that nvcc and whose headers still compile as C++17 (torch 2.14.1's need C++20; FlashInfer 0.2.x
passes -std=c++17). torch 2.11.0 is a CPython 3.12 wheel (the cached one, or PyPI's), installed with
--no-deps next to the CUDA 13 libraries of uv's cache (other patch releases than torch 2.11.0 pins: said in
the notes; only their sonames matter for loading torch). CUDA 13's nvcc gives template kernels internal
stubs, which FlashInfer releases of this time do not expect (the link fails on hidden kernel symbols), so
NVCC_APPEND_FLAGS=-static-global-template-stub=false is set, as a user on CUDA 13 sets it; FlashInfer's
own flags are untouched. The JIT workspace is under the run's temporary root.
"""

from __future__ import annotations

import os

from verification.cases import _builds as b
from verification.cases import _venv

PYTHON = "3.12"
TORCH_WHEEL = "torch-2.11.0-cp312-cp312-manylinux_2_28_x86_64.whl"
# CUDA 13 libraries present in uv's cache (torch 2.11.0 pins cuda-toolkit 13.0.2, cudnn 9.19.0.56,
# cusparselt 0.8.0, nccl 2.28.9; these are the same sonames)
CUDA_LIBS = ("cuda-toolkit[cublas,cudart,cufft,cufile,cupti,curand,cusolver,cusparse,nvjitlink,nvrtc,nvtx]==13.0.3.0",
             "nvidia-cudnn-cu13==9.24.0.43", "nvidia-cusparselt-cu13==0.8.1", "nvidia-nccl-cu13==2.30.7",
             "nvidia-nvshmem-cu13==3.4.5")
TORCH_DEPS = ("filelock==4.3.2", "typing-extensions==4.16.0", "setuptools==81.0.0", "sympy==1.14.0", "mpmath==1.3.0",
              "networkx==3.7", "jinja2==3.1.6", "markupsafe==3.0.4", "fsspec==2026.9.0", "numpy==2.5.5",
              "ninja==1.13.2", "packaging==26.4")
NVCC_FLAGS = "-static-global-template-stub=false"


def torch_wheel(ctx):
    folder = _venv.cache_dir() / "wheels-py312"
    wheel = folder / TORCH_WHEEL
    if not wheel.is_file():
        py = _venv.interpreter(PYTHON)
        if py is None:
            ctx.skip(f"needs a Python {PYTHON} interpreter")
        got = _venv.run([py, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "torch==2.11.0", "-d", folder],
                        env=_venv.tool_env(), timeout=1800)
        if not wheel.is_file():
            ctx.skip(f"could not download torch 2.11.0 for CPython {PYTHON}: {got.tail(300)}")
    return wheel


def env(ctx, flashinfer: str) -> _venv.Venv:
    """A CPython 3.12 uv environment: torch 2.11.0+cu130 (--no-deps), CUDA_LIBS, TORCH_DEPS, then
    flashinfer-python==`flashinfer` built from its PyPI sdist without isolation and without dependencies
    (FlashInfer's own imports of these releases need torch, numpy and ninja only)."""
    py = _venv.interpreter(PYTHON)
    if py is None:
        ctx.skip(f"needs a Python {PYTHON} interpreter (none on PATH or under pyenv)")
    tool = _venv.venv(ctx, f"uv-{b.UV}-tool", install=[f"uv=={b.UV}"])
    target = _venv._tmp_root() / f"fi02-py312-torch211-fi{flashinfer}"
    stamp = target / ".errkb-recipe"
    recipe = repr((TORCH_WHEEL, CUDA_LIBS, TORCH_DEPS, flashinfer))
    if not (stamp.is_file() and stamp.read_text() == recipe):
        steps = [[tool.bin("uv"), "venv", "-q", target, "--python", py],
                 [tool.bin("uv"), "pip", "install", "--python", target / "bin" / "python", "--no-deps", torch_wheel(ctx)],
                 [tool.bin("uv"), "pip", "install", "--python", target / "bin" / "python", *CUDA_LIBS, *TORCH_DEPS],
                 [tool.bin("uv"), "pip", "install", "--python", target / "bin" / "python", "--no-deps",
                  "--no-build-isolation", "--no-binary", "flashinfer-python", f"flashinfer-python=={flashinfer}"]]
        for argv in steps:
            res = _venv.run(argv, env=_venv.tool_env(), timeout=1800)
            if res.returncode != 0:
                ctx.skip(f"could not make the FlashInfer {flashinfer} environment ({argv[2]} ...): {res.tail(400)}")
        stamp.write_text(recipe)
    note = (f"uv {b.UV} environment, CPython {PYTHON}: {TORCH_WHEEL} (--no-deps), {' '.join(CUDA_LIBS)}, "
            f"{' '.join(TORCH_DEPS)}, flashinfer-python=={flashinfer} (PyPI sdist, --no-build-isolation)")
    if note not in ctx.notes:
        ctx.note(note)
    return _venv.Venv(target)


def run(ctx, flashinfer: str, code: str, *, path=(), timeout: float = 1500) -> _venv.Run:
    """`code` in env(flashinfer)'s Python with the JIT set up as the module docstring says."""
    target = env(ctx, flashinfer)
    ws = _venv._tmp_root() / f"fi02-ws-{flashinfer}"
    ws.mkdir(parents=True, exist_ok=True)
    extra = dict(VIRTUAL_ENV=str(target.path), CUDA_HOME=b.TOOLKIT, TORCH_CUDA_ARCH_LIST="9.0",
                 NVCC_APPEND_FLAGS=NVCC_FLAGS, FLASHINFER_WORKSPACE_BASE=str(ws), MAX_JOBS=str(os.cpu_count() or 2))
    if path:
        extra["PYTHONPATH"] = os.pathsep.join(map(str, path))
    note = (f"JIT: CUDA_HOME={b.TOOLKIT} (nvcc {b.nvcc_release(b.TOOLKIT)}), TORCH_CUDA_ARCH_LIST=9.0, "
            f"NVCC_APPEND_FLAGS={NVCC_FLAGS}; no GPU on this machine")
    if note not in ctx.notes:
        ctx.note(note)
    return _venv.run([target.python, "-c", code], env=_venv.tool_env(**extra), cwd=_venv._tmp_root(), timeout=timeout)
