"""Triton's compiled CUDA helper (cuda_utils) linked against a libcuda.so.1 that exports no driver
functions: importing it fails with "<cache>/cuda_utils....so: undefined symbol: cuModuleGetFunction"
at the first kernel launch.

The record's second condition, made with Triton's own build path on the GPU machine: the child
process that launches a small Triton attention kernel (one 64 x 64 block of softmax(QK^T)V, fp16)
has TRITON_LIBCUDA_PATH pointing at a folder whose libcuda.so.1 is a placeholder library with one
unrelated function (built here with the system C compiler), and a fresh TRITON_CACHE_DIR. Triton
(3.6: `-l:libcuda.so.1` with that folder as the only libcuda folder) links cuda_utils against the
placeholder; the linker's --as-needed (the default of Debian's and Ubuntu's GCC) drops a library
nothing was taken from, so the module has no libcuda dependency and the loader cannot bind the
driver functions when Python imports it. Each step notes the module's NEEDED entries (readelf).

The fixes run in children of their own with the default environment (no TRITON_LIBCUDA_PATH):
fix 2 deletes the cache the placeholder filled, fix 3 gives the environment a cache of its own,
fix 4 points TRITON_LIBCUDA_PATH at the driver's folder (as Triton finds it: `ldconfig -p`); each kernel's output
must match the fp32 reference. The control is the shared-cache situation of condition 3 on Triton
3.4+: the default environment reuses the cache the placeholder filled, and Triton must log "Triton
cache error: compiled module cuda_utils.so could not be loaded", rebuild the module and run. Fix 1
(the readelf / nm diagnosis) is checked on the module the placeholder build left in the cache."""

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from errkb.verify.case import Refuted
from verification.cases import _venv
from verification.cases._common import ref_attention

BACKEND = "triton"
REQUIRES = {"cuda": True, "packages": ["torch", "triton"]}
TIMEOUT = 300
TOL = {"atol": 1e-2, "rtol": 1e-2}  # fp16 inputs, fp32 accumulation, fp16 probabilities

KERNEL = r'''
import os, sys
import torch
import triton
import triton.language as tl


@triton.jit
def attention_block(Q, K, V, Out, scale, N: tl.constexpr, D: tl.constexpr):
    m = tl.arange(0, N)
    d = tl.arange(0, D)
    q = tl.load(Q + m[:, None] * D + d[None, :])
    k = tl.load(K + m[:, None] * D + d[None, :])
    v = tl.load(V + m[:, None] * D + d[None, :])
    s = tl.dot(q, tl.trans(k)) * scale
    s = s - tl.max(s, 1)[:, None]
    p = tl.exp(s)
    p = p / tl.sum(p, 1)[:, None]
    tl.store(Out + m[:, None] * D + d[None, :], tl.dot(p.to(tl.float16), v))


N, D = 64, 64
torch.manual_seed(0)
q, k, v = (torch.randn(N, D, device="cuda", dtype=torch.float16) for _ in range(3))
out = torch.empty_like(q)
print("errkb: TRITON_LIBCUDA_PATH", os.environ.get("TRITON_LIBCUDA_PATH"), flush=True)
try:
    attention_block[(1,)](q, k, v, out, D ** -0.5, N=N, D=D)
    torch.cuda.synchronize()
except Exception as exc:
    print(f"errkb: raised {type(exc).__module__}.{type(exc).__name__}", flush=True)
    if isinstance(exc, ImportError):
        raise ImportError(str(exc)) from None
    raise
torch.save({"q": q.cpu()[None, :, None], "k": k.cpu()[None, :, None], "v": v.cpu()[None, :, None],
            "out": out.cpu()[None, :, None]}, sys.argv[1])
print("errkb: ran", flush=True)
'''

PLACEHOLDER = "int errkb_not_a_driver_function(void) { return 0; }\n"
CACHE_ERROR = "Triton cache error: compiled module cuda_utils.so could not be loaded"

_stub: dict = {}


def placeholder_folder(ctx) -> Path:
    """A folder holding libcuda.so.1: a shared library with one function, none of CUDA's."""
    if "dir" not in _stub:
        folder = Path(tempfile.mkdtemp(prefix="errkb-libcuda-placeholder-"))
        (folder / "placeholder.c").write_text(PLACEHOLDER)
        cc = os.environ.get("CC") or shutil.which("gcc") or shutil.which("clang") or "cc"
        subprocess.run([cc, "-shared", "-fPIC", "-o", str(folder / "libcuda.so.1"), str(folder / "placeholder.c")],
                       check=True, capture_output=True, text=True)
        _stub["dir"] = folder
        ctx.note(f"placeholder libcuda.so.1 built by {cc} in {folder}")
    return _stub["dir"]


def _env(cache: Path, libcuda: Path | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_LIBCUDA_PATH", "TRITON_CACHE_DIR", "TRITON_HOME")}
    env["TRITON_CACHE_DIR"] = str(cache)
    if libcuda is not None:
        env["TRITON_LIBCUDA_PATH"] = str(libcuda)
    return env


def launch(ctx, cache: Path, libcuda: Path | None, label: str):
    """The kernel's first launch in a child with that cache (and TRITON_LIBCUDA_PATH); (run, saved)."""
    root = _venv._tmp_root()
    script, result = root / f"triton-libcuda-{label}.py", root / f"triton-libcuda-{label}.pt"
    script.write_text(KERNEL)
    result.unlink(missing_ok=True)
    # the whole environment given (not merged into the worker's): TRITON_LIBCUDA_PATH stays unset
    # where a step leaves it out, whatever the worker's own environment says
    res = _venv.run([sys.executable, script, result], env=_env(cache, libcuda), timeout=240)
    saved = ctx.torch.load(result) if result.exists() else None
    ctx.note(f"{label}: TRITON_CACHE_DIR={cache.name}, TRITON_LIBCUDA_PATH={libcuda}: exit {res.returncode}, "
             + ("ran" if saved is not None else _venv.last_exception(res.output, 300)))
    for so in sorted(cache.rglob("cuda_utils*.so")):
        ctx.note(f"  {so.parent.name[:10]}../{so.name}: NEEDED {needed(so)}")
    return res, saved


def needed(so: Path) -> list[str]:
    out = subprocess.run(["readelf", "-d", str(so)], capture_output=True, text=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def placeholder_cache(ctx):
    """A cache that a launch with the placeholder libcuda filled (made once per worker); returns
    (a fresh copy of it, that launch's run)."""
    if "cache" not in _stub:
        cache = Path(tempfile.mkdtemp(prefix="errkb-triton-cache-placeholder-"))
        _stub["cache"] = cache
        _stub["run"] = launch(ctx, cache, placeholder_folder(ctx), "placeholder")[0]
    copy = Path(tempfile.mkdtemp(prefix="errkb-triton-cache-copy-")) / "cache"
    shutil.copytree(_stub["cache"], copy)
    return copy, _stub["run"]


def matches(ctx, res, saved):
    if saved is None:
        ctx.call(_venv.reraise, res.output)
        raise RuntimeError(f"the child neither ran nor printed an exception: {res.tail(800)}")
    ref = ref_attention(saved["q"], saved["k"], saved["v"])
    ctx.close(saved["out"], ref, **TOL)


def driver_folder(ctx) -> Path:
    """The driver's libcuda.so.1 folder as Triton finds it (`ldconfig -p`, else LD_LIBRARY_PATH:
    triton.backends.nvidia.driver.libcuda_dirs, asked with TRITON_LIBCUDA_PATH unset)."""
    code = ("from triton.backends.nvidia.driver import libcuda_dirs; "
            "print('ERRKB-DIRS', *libcuda_dirs(), sep='\\n')")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_LIBCUDA_PATH"}
    res = _venv.run([sys.executable, "-c", code], env=env, timeout=120)
    lines = res.output.splitlines()
    dirs = lines[lines.index("ERRKB-DIRS") + 1:] if "ERRKB-DIRS" in lines else []
    dirs = [d for d in dirs if (Path(d) / "libcuda.so.1").exists()]
    if not dirs:
        raise RuntimeError(f"Triton finds no folder with libcuda.so.1: {res.tail(400)}")
    lib = Path(dirs[0]) / "libcuda.so.1"
    ctx.note(f"Triton's libcuda folder: {dirs[0]} (libcuda.so.1 -> {os.path.realpath(lib)})")
    return Path(dirs[0])


def reproduce(ctx):
    _, res = placeholder_cache(ctx)
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    """The diagnosis: the module the placeholder build left has no libcuda.so.1 among its NEEDED
    entries, while the driver's libcuda.so.1 exports cuModuleGetFunction (nm counts it)."""
    cache, _ = placeholder_cache(ctx)
    modules = sorted(cache.rglob("cuda_utils*.so"))
    if not modules:
        raise RuntimeError("the placeholder run left no cuda_utils module in its cache")
    listed = needed(modules[0])
    if any(n.startswith("libcuda.so") for n in listed):
        raise Refuted(f"readelf lists a libcuda among NEEDED ({listed}): the fix's diagnosis would not point at the build")
    lib = driver_folder(ctx) / "libcuda.so.1"
    nm = subprocess.run(["nm", "-D", "--defined-only", str(os.path.realpath(lib))], capture_output=True, text=True)
    count = sum(1 for line in nm.stdout.splitlines() if line.endswith(" cuModuleGetFunction"))
    ctx.note(f"nm -D --defined-only {os.path.realpath(lib)} | grep -c ' cuModuleGetFunction': {count}")
    if count == 0:
        raise Refuted("the driver's libcuda.so.1 does not export cuModuleGetFunction")


def fix_2(ctx):
    """Delete the cache the placeholder build filled; the default environment rebuilds and runs."""
    cache, _ = placeholder_cache(ctx)
    shutil.rmtree(cache)
    cache.mkdir()
    matches(ctx, *launch(ctx, cache, None, "after-rm"))


def fix_3(ctx):
    """The default environment with a cache of its own."""
    placeholder_cache(ctx)
    own = Path(tempfile.mkdtemp(prefix="errkb-triton-cache-own-"))
    matches(ctx, *launch(ctx, own, None, "own-cache"))


def fix_4(ctx):
    """TRITON_LIBCUDA_PATH set to the driver's folder: the module links libcuda.so.1 and runs."""
    cache = Path(tempfile.mkdtemp(prefix="errkb-triton-cache-driver-"))
    res, saved = launch(ctx, cache, driver_folder(ctx), "driver-folder")
    matches(ctx, res, saved)
    modules = sorted(cache.rglob("cuda_utils*.so"))
    if not modules or "libcuda.so.1" not in needed(modules[0]):
        raise Refuted(f"the rebuilt module does not list libcuda.so.1: {[needed(m) for m in modules]}")


def fix_5(ctx):
    ctx.skip("upgrading the NVIDIA driver is not something a step can do")


def control(ctx):
    """Condition 3 on Triton 3.4+: the default environment reusing the cache the placeholder build
    filled logs Triton's cache error, rebuilds cuda_utils once and runs."""
    cache, _ = placeholder_cache(ctx)
    res, saved = launch(ctx, cache, None, "shared-cache")
    matches(ctx, res, saved)
    if CACHE_ERROR not in res.output:
        raise Refuted(f"no {CACHE_ERROR!r} in the child's output: {res.tail(600)}")
    ctx.note(f"the child logged {CACHE_ERROR!r}, then rebuilt the module and ran")
