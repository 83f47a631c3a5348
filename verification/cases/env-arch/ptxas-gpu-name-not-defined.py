"""ptxas fatal : Value 'sm_120' is not defined for option 'gpu-name': an assembler older than the GPU.

No GPU is needed: the architecture is a command-line option of ptxas, and Triton passes the
compile target's to it. Environments made by uv 0.9.0 (this Python) hold only a Triton wheel from
PyPI (and setuptools), with the ptxas it bundles.

Reproduce: Triton 3.2.0 compiles an element-wise attention kernel (`exp_scores`, no warp shuffles,
no tl.dot) for `GPUTarget("cuda", 120, 32)`; its bundled ptxas (CUDA 12.4) stops on the record's
line, which Triton prints inside 'Internal Triton PTX codegen error' (raised here under ptxas's
name, the class the record gives). The step also runs that ptxas by itself on a seven-line PTX file
with --gpu-name=sm_120 and notes its exit status, and notes what a kernel with a row reduction
(`softmax_rows`) gets instead: LLVM of Triton 3.0-3.2 does not know sm_120 either and aborts on
the warp shuffle before ptxas runs.

Fix 1: Triton 3.3.0 compiles both kernels for sm_120 and sm_100 down to a cubin (its
ptxas-blackwell, CUDA 12.8); the step also notes that Triton 3.2.0 told to use that ptxas through
TRITON_PTXAS_PATH stops on its own PTX-version table (the record's caveat). Fix 2: the CUDA 13.0
nvcc of /usr/local/cuda compiles a small kernel for sm_120 and sm_100 to cubins (`nvcc --version`
first); skipped where there is no nvcc of 12.8 or newer."""

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from verification.cases import _venv
from verification.cases.triton._compile import EXP_SCORES, SOFTMAX_ROWS, bundled_ptxas, compile_in, compiled, \
    triton_env

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 900
OLD, NEW = "3.2.0", "3.3.0"
PTX = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n"
CU = "__global__ void scale(float *s, float c) { s[threadIdx.x] *= c; }\n"


def _message_of(result: dict) -> str:
    if result.get("aborted"):
        return result["aborted"]
    return "\n".join(item["message"] for item in result.get("chain", []))


def reproduce(ctx):
    env = triton_env(ctx, OLD)
    ptxas = bundled_ptxas(env)
    version = _venv.run([ptxas, "--version"], timeout=60).output.strip().splitlines()[-1]
    folder = Path(tempfile.mkdtemp(prefix="errkb-ptx-", dir=_venv._tmp_root()))
    (folder / "k.ptx").write_text(PTX)
    alone = _venv.run([ptxas, "--gpu-name=sm_120", folder / "k.ptx", "-o", folder / "k.o"], timeout=60)
    ctx.note(f"Triton {OLD}'s bundled ptxas ({version}) on a minimal PTX file with --gpu-name=sm_120: "
             f"exit status {alone.returncode}: {alone.output.strip()[:200]}")
    shuffled = compile_in(ctx, env, SOFTMAX_ROWS, 120)
    ctx.note(f"softmax_rows (a row max and sum: warp shuffles) for sm_120 with Triton {OLD}: "
             + ("compiled" if shuffled.get("ok") else _message_of(shuffled)[:300]))
    result = compile_in(ctx, env, EXP_SCORES, 120)
    ctx.note(f"exp_scores for sm_120 with Triton {OLD}: " + (_message_of(result).split("\n", 1)[0][:200] or "compiled"))
    ctx.expect_error(_venv.raise_tool_message, "ptxas", _message_of(result), ctx.record["template"])


def fix_1(ctx):
    env = triton_env(ctx, NEW)
    for kernel in (EXP_SCORES, SOFTMAX_ROWS):
        for cc in (120, 100):
            compiled(ctx, compile_in(ctx, env, kernel, cc), f"{kernel[0]} for sm_{cc} with Triton {NEW}")
    blackwell = bundled_ptxas(env, "ptxas-blackwell")
    ctx.note(f"Triton {NEW}'s ptxas-blackwell: {_venv.run([blackwell, '--version'], timeout=60).output.strip().splitlines()[-1]}")
    old = compile_in(ctx, triton_env(ctx, OLD), EXP_SCORES, 120, TRITON_PTXAS_PATH=blackwell)
    ctx.note(f"Triton {OLD} with TRITON_PTXAS_PATH at that ptxas, sm_120: "
             + ("compiled" if old.get("ok") else _message_of(old).split("\n", 1)[0][:200]))


def fix_2(ctx):
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not Path(nvcc).exists():
        ctx.skip("needs an nvcc (CUDA 12.8 or newer)")
    version = _venv.run([nvcc, "--version"], timeout=60).output
    m = re.search(r"release (\d+)\.(\d+)", version)
    if not m or (int(m.group(1)), int(m.group(2))) < (12, 8):
        ctx.skip(f"needs nvcc 12.8 or newer; this one says {m.group(0) if m else version[-200:]}")
    ctx.note(f"{nvcc}: {m.group(0)}")
    folder = Path(tempfile.mkdtemp(prefix="errkb-nvcc-", dir=_venv._tmp_root()))
    (folder / "k.cu").write_text(CU)

    def builds():
        for arch in ("120", "100"):
            out = folder / f"k{arch}.cubin"
            res = subprocess.run([nvcc, "-gencode", f"arch=compute_{arch},code=sm_{arch}", "-cubin", "-o", str(out),
                                  str(folder / "k.cu")], capture_output=True, text=True, timeout=300)
            _venv.raise_tool_message("ptxas", res.stdout + res.stderr, ctx.record["template"])
            if res.returncode != 0 or not out.is_file():
                raise RuntimeError(f"nvcc for sm_{arch} failed: {(res.stdout + res.stderr)[-400:]}")
            ctx.note(f"nvcc -gencode arch=compute_{arch},code=sm_{arch}: {out.stat().st_size} byte cubin")

    ctx.call(builds)
