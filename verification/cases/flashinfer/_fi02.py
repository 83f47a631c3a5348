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

from errkb.verify.case import Refuted
from verification.cases import _abi_wheels as abi
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


# SGLang's decode plan against a FlashInfer 0.2.x op: the caller is SGLang's own fast_decode_plan
# (sglang/srt/layers/attention/flashinfer_backend.py, bound as each decode wrapper's begin_forward when SGLang captures
# CUDA graphs), taken unchanged from the release's PyPI wheel and run with the arguments its indices updater passes.
# FlashInfer's BatchDecodeWithPagedKVCacheWrapper pins host memory at construction (needs a driver), so `self` is a
# namespace of what a CUDA-graph wrapper holds; torch.cuda.current_stream() answers stream 0 and torch.cuda.device()
# is a no-op. The op and torch's binder are real: the binder counts arguments before anything is dispatched.
PLAN_MARK = "ERRKB-FIPLAN "

PLAN_CHILD = r'''
import __future__, ast, json, sys, zipfile
from contextlib import nullcontext
from types import SimpleNamespace
import torch
SGLANG_WHEEL = sys.argv[1]
out = {"torch": torch.__version__, "raised": None}
import flashinfer
from flashinfer.decode import get_batch_decode_module
out["flashinfer"] = flashinfer.__version__
mod = get_batch_decode_module(torch.float16, torch.float16, torch.float16, torch.int32, 128, 128, 0, False, False)
schema = mod.plan.default._schema if hasattr(mod.plan, "default") else mod.plan._schema
out["schema"], out["schema_args"] = str(schema), len(schema.arguments)
name = "sglang/srt/layers/attention/flashinfer_backend.py"
with zipfile.ZipFile(SGLANG_WHEEL) as z:
    tree = ast.parse(z.read(name).decode())
fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "fast_decode_plan")
calls = [c for c in ast.walk(fn) if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr == "plan"]
out["sglang_passes"] = sorted({len(c.args) for c in calls})
ns = {"torch": torch, "global_override_indptr_cpu": None}
exec(compile(ast.Module([fn], []), name, "exec", flags=__future__.annotations.compiler_flag), ns)
torch.cuda.current_stream = lambda device=None: SimpleNamespace(cuda_stream=0)
torch.cuda.device = lambda device=None: nullcontext()
bs, kv_len = 2, 16
buf = lambda n, dt=torch.uint8: torch.empty(n, dtype=dt)
wrapper = SimpleNamespace(use_tensor_cores=False, is_cuda_graph_enabled=True, _fixed_batch_size=bs,
                          _paged_kv_indices_buf=buf(bs * kv_len, torch.int32), _cached_module=mod,
                          _float_workspace_buffer=buf(128 * 1024 * 1024), _int_workspace_buffer=buf(8 * 1024 * 1024),
                          _pin_memory_int_workspace_buffer=buf(8 * 1024 * 1024), device=torch.device("cpu"))
indptr = torch.arange(bs + 1, dtype=torch.int32) * kv_len
indices = torch.arange(bs * kv_len, dtype=torch.int32)
last_page_len = torch.ones(bs, dtype=torch.int32)
try:
    ns["fast_decode_plan"](wrapper, indptr, indices, last_page_len, 32, 8, 128, 1,
                           data_type=torch.float16, q_data_type=torch.float16, non_blocking=True)
    out["returned"] = True
except BaseException as e:
    out["raised"] = [type(e).__name__, str(e)]
print(%r + json.dumps(out), flush=True)
''' % PLAN_MARK

PLAN_STANDIN = ("stand-ins: the wrapper `self` is a namespace of what a CUDA-graph BatchDecodeWithPagedKVCacheWrapper "
                "holds (constructing one pins host memory: needs a CUDA driver); torch.cuda.current_stream() answers stream 0 and "
                "torch.cuda.device() is a no-op; the plan op is FlashInfer's, compiled here")


def pinned(ctx, sglang: str) -> str:
    """The flashinfer_python release the SGLang release's METADATA pins."""
    pins = abi.requires(ctx, "sglang", sglang, "flashinfer_python")
    ctx.note(f"sglang {sglang}'s METADATA: {pins}")
    got = [p.split("==", 1)[1] for p in pins if "==" in p]
    if not got:
        raise RuntimeError(f"sglang {sglang} pins no flashinfer_python release: {pins}")
    return got[0]


def sglang_plan(ctx, sglang: str, flashinfer: str) -> dict:
    """SGLang `sglang`'s own fast_decode_plan (from its wheel) calling FlashInfer `flashinfer`'s JIT-built decode
    plan op (fp16, head dim 128, page size 1), as PLAN_CHILD says; what it reported (schema, argument counts,
    what the call raised)."""
    wheel = abi.wheel_file(ctx, "sglang", sglang)
    res = run(ctx, flashinfer, PLAN_CHILD.replace("sys.argv[1]", repr(str(wheel))))
    got = _venv.reported(res, PLAN_MARK)
    if PLAN_STANDIN not in ctx.notes:
        ctx.note(PLAN_STANDIN)
    ctx.note(f"FlashInfer {got['flashinfer']} (torch {got['torch']}): plan schema has {got['schema_args']} arguments "
             f"({got['schema'][:160]}...); SGLang {sglang}'s fast_decode_plan passes {got['sglang_passes']}; call: "
             + (f"{got['raised'][0]}: {got['raised'][1][:240]}" if got["raised"] else "returned"))
    return got


def past_binder(got: dict, binder: str) -> None:
    """Re-raise what sglang_plan's call raised if it is torch's binder refusing the arguments (`binder`: text of
    the refusal); anything later (the plan's host code needs a GPU) is past it."""
    if got["raised"] and binder in got["raised"][1]:
        raise _venv.exception_class(got["raised"][0])(got["raised"][1])


def plan_fits(ctx, sglang: str, flashinfer: str, binder: str) -> dict:
    """The fixes' check: SGLang `sglang`'s plan call under FlashInfer `flashinfer` gets past torch's binder
    (`binder`: the refusal's text), passing as many values as the op's schema has."""
    got = sglang_plan(ctx, sglang, flashinfer)
    ctx.call(past_binder, got, binder)
    if got["sglang_passes"] != [got["schema_args"]]:
        raise Refuted(f"SGLang {sglang} passes {got['sglang_passes']} values, FlashInfer {flashinfer}'s plan schema "
                      f"has {got['schema_args']}")
    return got


def require_pin(ctx, sglang: str, flashinfer: str) -> None:
    """Refute a fix that rests on SGLang `sglang` pinning FlashInfer `flashinfer` when its METADATA does not."""
    if pinned(ctx, sglang) != flashinfer:
        raise Refuted(f"sglang {sglang} does not pin flashinfer_python {flashinfer}")
