"""ptxas refuses an instruction above the build's target: "Feature '.bf16' requires .target sm_80 or
higher".

A small real build with this machine's nvcc 13.0 (/usr/local/cuda-13.0): one kernel issuing the warp-level
bf16 tensor-core MMA that FlashAttention-2-style attention kernels are built on
(mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32, written inline here: the kernel is errkb's own, a few
lines), compiled with the -gencode flags torch's extension builder derives from an arch list. CUDA 13.0
no longer targets sm_5x-sm_7.0, so the record's own example (f16 arithmetic below sm_53, vllm#9269) cannot
be built with it; the oldest target it has, 7.5 (Turing), lacks the bf16 MMA.

Reproduce: TORCH_CUDA_ARCH_LIST-style list "7.5;8.0" -> ptxas stops on the sm_75 pass with the record's
message. Fix 1: the list of the GPUs the kernel runs on ("8.0;8.6;8.9;9.0", as the fix writes it) compiles.
Fix 2: the fix's grep over the failing build's log counts the compute_ targets and shows compute_75."""

import os
import re
import subprocess

from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 600
NVCC = "/usr/local/cuda-13.0/bin/nvcc"
KERNEL = r'''#include <cstdint>
__global__ void mma_bf16(const uint32_t* a, const uint32_t* b, float* c) {
  uint32_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3], b0 = b[0], b1 = b[1];
  float d0, d1, d2, d3;
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};\n"
               : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(0.f), "f"(0.f), "f"(0.f), "f"(0.f));
  c[threadIdx.x] = d0 + d1 + d2 + d3;
}
'''
_runs: dict = {}


def gencode(arch_list: str) -> list[str]:
    """-gencode flags for a TORCH_CUDA_ARCH_LIST-style list (X.Y entries: SASS for each, as torch's builder)."""
    flags = []
    for arch in filter(None, re.split(r"[;\s]+", arch_list)):
        num = arch.replace(".", "")
        flags += ["-gencode", f"arch=compute_{num},code=sm_{num}"]
    return flags


def build(ctx, arch_list: str) -> _venv.Run:
    if not os.path.exists(NVCC):
        ctx.skip(f"needs nvcc at {NVCC}")
    if arch_list not in _runs:
        folder = _venv._tmp_root() / "ptxas-feature"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "mma_bf16.cu").write_text(KERNEL)
        argv = [NVCC, "-c", "mma_bf16.cu", "-o", f"mma_bf16-{arch_list.replace(';', '_')}.o", *gencode(arch_list)]
        _runs[arch_list] = _venv.run(argv, cwd=folder, timeout=300)
    res = _runs[arch_list]
    release = subprocess.run([NVCC, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-2:]
    ctx.note(f"nvcc ({' '.join(release)}) for arch list {arch_list!r}: {res.summary().split(': ', 1)[-1]}; "
             + " | ".join(ln.strip()[:160] for ln in res.output.strip().splitlines()[-3:]))
    return res


def reproduce(ctx):
    res = build(ctx, "7.5;8.0")
    ctx.expect_error(_venv.raise_tool_message, "ptxas", res.output, ctx.record["template"])


def fix_1(ctx):
    res = build(ctx, "8.0;8.6;8.9;9.0")

    def compiled():
        if res.returncode != 0:
            raise AssertionError(f"nvcc failed: {res.tail(600)}")
    ctx.call(compiled)


def fix_2(ctx):
    res = build(ctx, "7.5;8.0")
    log = " ".join(res.argv) + "\n" + res.output
    counts: dict = {}
    for m in re.findall(r"compute_[0-9]*", log):
        counts[m] = counts.get(m, 0) + 1
    ctx.note(f"grep -o 'compute_[0-9]*' build.log | sort | uniq -c: {dict(sorted(counts.items()))}")

    def shows_old_target():
        if "compute_75" not in counts:
            raise AssertionError("the too-old target is not in the log")
    ctx.call(shows_old_target)
