"""A float8 tensor handed over through DLPack on a torch older than 2.10: "float8 types are not
supported by dlpack", from torch itself and from apache-tvm-ffi's fallback conversion of a torch
tensor argument (the path FlashInfer 0.4+ calls its kernels through).

No GPU is needed: the refusal is in torch's DLPack exporter, before any device code. Each torch runs
in an environment made by uv 0.9.0 with apache-tvm-ffi 0.1.15.post2 and numpy; every conversion runs
in a child process of that environment, with a TVM_FFI_CACHE_DIR of the run's own (no addon that
tvm_ffi built elsewhere is found). The torch releases:

- OLD (default torch==2.5.1, PyPI's CUDA 12.4 build, which imports without a GPU; from uv's cache in
  ERRKB_VERIFY_CACHE): a release inside the record's 2.1-2.9 range. The brief of this case asked for
  2.9.x; this machine reaches no CPU build of it (PyPI's Linux x86_64 wheels of 2.9 are CUDA builds
  of several GB with their libraries, PyTorch's own index is out of reach): set
  ERRKB_VERIFY_FP8_OLD_TORCH=torch==2.9.1 where that fits.
- NEW: b.cpu_torch_requirement() (torch 2.13.0+cpu, a CPU-only build; a release after 2.10).

The child converts a small float8_e4m3fn (or the step's dtype) tensor either with
`torch.utils.dlpack.to_dlpack` and back (`utils`), or by passing it to a tvm_ffi function made from a
Python callable (`tvm_ffi.convert(lambda t: t)`): tvm_ffi converts the argument as it does for
FlashInfer's compiled functions, and hands it back (`tvm_ffi`). Each prints whether torch.Tensor has
the DLPack exchange API (torch's own, or tvm_ffi's addon) and whether the bytes came back unchanged.

Reproduce: OLD refuses float8 through to_dlpack and through tvm_ffi, which has no addon here
(no torch-c-dlpack-ext, no setuptools to JIT-build one: tvm_ffi warns and falls back), with the
record's message; the traceback names TVMFFIPyArgSetterTorchFallback_.
Fix 1: NEW exports float8 through to_dlpack and round-trips the bytes; tvm_ffi passes it, with its
exchange API and with the fallback forced (TVM_FFI_SKIP_DLPACK_C_EXCHANGE_API=1).
Fix 2: on OLD, bfloat16 and float16 KV-cache-shaped tensors pass tvm_ffi's fallback.
Fix 3: on OLD with torch-c-dlpack-ext 0.1.5 (prebuilt addons for torch 2.4-2.9) and packaging
installed, tvm_ffi passes float8 through the exchange API.
Control: a bfloat16 tensor on OLD exports through to_dlpack and round-trips."""

import os
import re

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
OLD_TORCH = os.environ.get("ERRKB_VERIFY_FP8_OLD_TORCH", "torch==2.5.1")
TVM_FFI = "apache-tvm-ffi==0.1.15.post2"
C_DLPACK_EXT = "torch-c-dlpack-ext==0.1.5"

PROBE = r"""
import importlib.util, sys, torch
mode, dtype = sys.argv[1], getattr(torch, sys.argv[2])
print("torch", torch.__version__, "setuptools", importlib.util.find_spec("setuptools") is not None, flush=True)
x = torch.arange(-16, 16, dtype=torch.float32).reshape(2, 2, 8).to(dtype)
if mode == "utils":
    import torch.utils.dlpack as dl
    y = dl.from_dlpack(dl.to_dlpack(x))
else:
    import tvm_ffi
    print("tvm_ffi", tvm_ffi.__version__, "exchange-api", hasattr(torch.Tensor, "__dlpack_c_exchange_api__"), flush=True)
    echo = tvm_ffi.convert(lambda t: t)
    y = echo(x)
    if not isinstance(y, torch.Tensor):
        y = torch.from_dlpack(y)
print("round-trip", mode, str(y.dtype), tuple(y.shape), torch.equal(y.view(torch.uint8), x.view(torch.uint8)))
"""


def _env(ctx, key: str, *extra: str) -> _venv.Venv:
    _, env = b.uv_env(ctx, key, *extra, "numpy", TVM_FFI)
    return env


def old(ctx, *extra: str) -> _venv.Venv:
    return _env(ctx, "fp8-old-" + "-".join([OLD_TORCH.split("==")[-1], *[e.split("==")[0] for e in extra]]),
                OLD_TORCH, *extra)


def new(ctx) -> _venv.Venv:
    return _env(ctx, "fp8-new", *b.cpu_torch_requirement())


def probe(ctx, env: _venv.Venv, mode: str, dtype: str = "float8_e4m3fn", **extra: str) -> _venv.Run:
    cache = _venv._tmp_root() / "tvm-ffi-cache"
    cache.mkdir(exist_ok=True)
    child = _venv.tool_env(VIRTUAL_ENV=str(env.path), TVM_FFI_CACHE_DIR=str(cache), **extra)
    for name in ("TVM_FFI_DISABLE_TORCH_C_DLPACK", "TVM_FFI_SKIP_DLPACK_C_EXCHANGE_API"):
        if name not in extra:
            child.pop(name, None)
    res = _venv.run([env.python, "-c", PROBE, mode, dtype], env=child, cwd=_venv._tmp_root(), timeout=600)
    head = " ".join(l for l in res.output.splitlines() if l.startswith(("torch ", "tvm_ffi ")))
    if not head.startswith("torch "):
        ctx.skip(f"torch did not import in {env.path.name}: {res.tail(400)}")
    how = " ".join(f"{k}={v}" for k, v in extra.items())
    tail = next((l for l in res.output.splitlines() if l.startswith("round-trip")), None) \
        or _venv.last_exception(res.output, 200)
    ctx.note(f"[{mode}, {dtype}{', ' + how if how else ''}] {head}: {tail}")
    return res


def round_trips(res: _venv.Run, dtype: str) -> None:
    """A claimed-good conversion: no exception, and the tensor came back with its dtype and bytes."""
    line = _venv.printed(res, "round-trip")
    if not line.endswith(" True") or f"torch.{dtype}" not in line:
        raise AssertionError(f"the tensor did not come back unchanged: {line}")


def reproduce(ctx):
    env = old(ctx)
    res = probe(ctx, env, "utils")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])
    res = probe(ctx, env, "tvm_ffi")
    warned = "Failed to JIT torch c dlpack extension" in res.output
    frame = re.search(r"in (tvm_ffi\.core\.TVMFFIPyArgSetter\w+)", res.output)
    ctx.note(f"tvm_ffi {'warned' if warned else 'did not warn'} that it could not build its torch addon; "
             f"the innermost tvm_ffi frame: {frame.group(1) if frame else 'none'}")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    env = new(ctx)
    runs = [probe(ctx, env, "utils"), probe(ctx, env, "tvm_ffi"),
            probe(ctx, env, "tvm_ffi", TVM_FFI_SKIP_DLPACK_C_EXCHANGE_API="1")]

    def all_round_trip():
        for res in runs:
            round_trips(res, "float8_e4m3fn")

    ctx.call(all_round_trip)


def fix_2(ctx):
    env = old(ctx)
    runs = [(dt, probe(ctx, env, "tvm_ffi", dt)) for dt in ("bfloat16", "float16")]

    def both_pass():
        for dt, res in runs:
            round_trips(res, dt)

    ctx.call(both_pass)


def fix_3(ctx):
    env = old(ctx, C_DLPACK_EXT, "packaging")
    res = probe(ctx, env, "tvm_ffi")

    def through_exchange_api():
        round_trips(res, "float8_e4m3fn")
        if "exchange-api True" not in res.output:
            raise AssertionError(f"torch-c-dlpack-ext did not give torch.Tensor the exchange API: {res.tail(400)}")

    ctx.call(through_exchange_api)


def control(ctx):
    res = probe(ctx, old(ctx), "utils", "bfloat16")
    ctx.call(round_trips, res, "bfloat16")
