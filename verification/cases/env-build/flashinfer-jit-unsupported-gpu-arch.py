"""FlashInfer's JIT asks nvcc for an architecture the toolkit does not know: "nvcc fatal : Unsupported
gpu architecture 'compute_101a'".

flashinfer-python 0.5.3 (PyPI wheel, `--no-deps`, next to torch 2.13.0+cpu: _flashinfer_jit.py) and the
CUDA 13.0 toolkit of this machine (/usr/local/cuda, a link to /usr/local/cuda-13.0). CUDA 13.0 no longer
knows compute_101 (its `nvcc --list-gpu-arch` goes compute_100, compute_110, compute_103, ...), so a
FLASHINFER_CUDA_ARCH_LIST of "10.1a", written for a CUDA 12.9 toolkit, is a list copied from another
machine, one of the record's situations. The step JIT-builds FlashInfer's SiLU-and-mul module
(`gen_act_and_mul_module("silu").build_and_load()`); ninja runs nvcc, which stops at once. No GPU is
involved: the targets come from the variable, as in a Dockerfile.

Reproduce: nvcc's fatal line, read from ninja's output inside FlashInfer's "Ninja build failed" error
(raised as a message of the tool, `nvcc`). Fix 1 needs a second, newer toolkit (CUDA 12.9, which knows
compute_101a): skipped, the fix's check command is noted. Fix 2: the fix's list ("9.0a") gets past nvcc:
the .cu file compiles to its object (this machine's toolkit then lacks libcuda's stub for the link,
noted). Fix 3: after a failed build with CUDA_HOME=/usr/local/cuda, a retry with CUDA_HOME=/usr/local/cuda-13.0
keeps the build.ninja written the first time (it still runs /usr/local/cuda/bin/nvcc); once the cache is
deleted the retry writes a new one with the newly selected nvcc."""

import shutil
from pathlib import Path

from verification.cases import _flashinfer_jit as fi
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
VERSION = "0.5.3"
CUDA = "/usr/local/cuda"
CUDA_OTHER = "/usr/local/cuda-13.0"  # the same toolkit under another path: which nvcc ninja runs shows in its line
COPIED = "10.1a"


def _toolkit(ctx, home: str = CUDA) -> str:
    nvcc = Path(home) / "bin" / "nvcc"
    if not nvcc.exists():
        ctx.skip(f"needs a CUDA toolkit at {home}")
    archs = _venv.run([nvcc, "--list-gpu-arch"], timeout=60).output.split()
    version = _venv.run([nvcc, "--version"], timeout=60).output.strip().splitlines()[-2:]
    if "compute_101" in archs:
        ctx.skip(f"this toolkit ({' '.join(version)}) knows compute_101: no unknown arch to ask for")
    ctx.note(f"{nvcc}: {' '.join(version)}; --list-gpu-arch: {' '.join(archs)}")
    return str(nvcc)


def reproduce(ctx):
    _toolkit(ctx)
    res = fi.run(ctx, VERSION, fi.BUILD, arch_list=COPIED, cuda_home=CUDA, ws=fi.workspace("unsupported"))
    flag = "-gencode=arch=compute_101a,code=sm_101a"
    ctx.note(f"ninja ran {fi.nvcc_used(res.output) or 'no nvcc'} {'with' if flag in res.output else 'without'} {flag}")
    ctx.expect_error(_venv.raise_tool_message, "nvcc", res.output, ctx.record["template"])


def fix_1(ctx):
    _toolkit(ctx)
    ctx.skip("needs a second CUDA toolkit that knows compute_101a (CUDA 12.8/12.9); this machine has only 13.0")


def fix_2(ctx):
    _toolkit(ctx)
    ws = fi.workspace("listed")
    res = fi.run(ctx, VERSION, fi.BUILD, arch_list="9.0a", cuda_home=CUDA, ws=ws)
    objects = sorted(ws.glob(".cache/flashinfer/*/*/cached_ops/silu_and_mul/*.cuda.o"))
    if "built" not in res.output:
        later = [l.strip() for l in res.output.splitlines() if l.startswith("/usr/bin/ld:") or "collect2:" in l]
        ctx.note("then the link stopped: " + ("; ".join(later) or _venv.last_exception(res.output, 300))[:300])

    def compiled():
        _venv.raise_tool_message("nvcc", res.output, ctx.record["template"])
        if not objects:
            raise AssertionError(f"nvcc did not compile the module: {res.tail(600)}")
        ctx.note(f"nvcc compiled {objects[0].name} for sm_90a ({objects[0].stat().st_size} bytes)")

    ctx.call(compiled)


def fix_3(ctx):
    _toolkit(ctx)
    if not Path(CUDA_OTHER, "bin", "nvcc").exists() or Path(CUDA).resolve() == Path(CUDA):
        ctx.skip(f"needs the toolkit under two paths ({CUDA} and {CUDA_OTHER})")
    ws = fi.workspace("retry")
    first = fi.run(ctx, VERSION, fi.BUILD, arch_list=COPIED, cuda_home=CUDA, ws=ws)
    kept = fi.run(ctx, VERSION, fi.BUILD, arch_list=COPIED, cuda_home=CUDA_OTHER, ws=ws)
    shutil.rmtree(ws / ".cache" / "flashinfer")
    ctx.note(f"rm -rf {ws / '.cache' / 'flashinfer'} (the fix's ~/.cache/flashinfer under FLASHINFER_WORKSPACE_BASE)")
    fresh = fi.run(ctx, VERSION, fi.BUILD, arch_list=COPIED, cuda_home=CUDA_OTHER, ws=ws)
    used = {name: fi.nvcc_used(r.output)[:1]
            for name, r in (("first", first), ("retry", kept), ("after deleting", fresh))}
    ctx.note(f"nvcc that ninja ran: {used}")

    def regenerated():
        if used["first"] != [f"{CUDA}/bin/nvcc"]:
            raise AssertionError(f"the first build did not run {CUDA}/bin/nvcc: {used}")
        if used["after deleting"] != [f"{CUDA_OTHER}/bin/nvcc"]:
            raise AssertionError(f"after deleting the cache ninja did not run the new toolkit's nvcc: {used}")

    ctx.call(regenerated)
