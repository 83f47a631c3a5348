"""A Triton kernel whose MLIR lowering fails for the target GPU: MLIR prints its diagnostics on
stderr ("<kernel file>:<line>:<col>: error: ...", "Pipeline failed while executing [...]") and
Triton's binding raises RuntimeError('PassManager::run failed'), which says nothing more.

The kernel is _kernels.scores_int8 (Q·Kᵀ of int8 tiles rescaled to fp32, SageAttention's QK
product), compiled by the installed Triton for an sm75 target (what its first launch on a T4 does)
in a child process (_compile.py): Triton's TritonGPUAccelerateMatmul pass cannot lower an int8
tl.dot below sm80 (the MLIR line itself has a record of its own,
triton-int8-dot-below-sm80-not-floating-point; this record is the RuntimeError under it). No GPU
is needed for that, so the steps run wherever Triton imports; on a GPU machine the same compile
uses that machine's Triton.

Fix 1 runs the record's first command on a script that compiles the kernel that way:
`python script.py 2>&1 | grep -B2 -A6 -E 'error:|Pipeline failed'` must show an MLIR error
line at the kernel's own file and a line inside it, and the failing pass, before the RuntimeError
(MLIR_ENABLE_DUMP, its second command, is not run). Fixes 2 (the Triton release a kernel was
written for) and 3 (a project's non-Triton path) are not run here. The control is the same kernel
on a target whose Triton lowers int8 dots: launched on the GPU when there is one (sm80+), against
the exact int32 product rescaled in fp32; compiled for sm80 when there is none."""

import inspect

from errkb.verify.case import Refuted
from verification.cases.triton import _kernels
from verification.cases.triton._compile import KERNELS, compile_for, compiled, reraise
from verification.cases.triton._launch import on_gpu, shell_traceback

BACKEND = "triton"
REQUIRES = {"packages": ["torch", "triton"]}
TIMEOUT = 300

SIG = {"Q": "*i8", "K": "*i8", "Out": "*fp32", "q_scale": "fp32", "k_scale": "fp32"}
TILES = {"BLOCK_M": 64, "BLOCK_N": 64, "HEAD_DIM": 64}


def reproduce(ctx):
    result = compile_for(ctx, KERNELS, "scores_int8", SIG, TILES, 75)
    ctx.note(f"scores_int8 compiled for sm75 by Triton {result.get('triton')}")
    mlir = [ln for ln in result.get("stderr", "").splitlines() if ": error: " in ln]
    ctx.note("MLIR printed first: " + (mlir[0][-300:] if mlir else "(nothing)"))
    ctx.expect_error(reraise, result)


def fix_1(ctx):
    shown, whole = shell_traceback(ctx, KERNELS, "scores_int8", SIG, TILES, None, "grep -B2 -A6 -E 'error:|Pipeline failed'",
                                   cc=75)
    lines, start = inspect.getsourcelines(_kernels.scores_int8.fn)
    kernel_lines = range(start, start + len(lines))
    ctx.observed = {"grep": shown[-3000:]}
    errors = [ln for ln in shown.splitlines() if f"{KERNELS}:" in ln and ": error: " in ln]
    located = [ln for ln in errors if int(ln.split(f"{KERNELS}:", 1)[1].split(":", 1)[0]) in kernel_lines]
    if not located:
        raise Refuted(f"no MLIR error line at {KERNELS} lines {start}-{kernel_lines[-1]} in the grep's output")
    if "Pipeline failed while executing" not in shown:
        raise Refuted("the grep's output does not name the failing pass")
    at_error = whole.find(located[0].split(": error: ", 1)[1])
    at_raise = whole.find("RuntimeError: PassManager::run failed")
    if at_raise == -1 or not 0 <= at_error < at_raise:
        raise Refuted("the MLIR error does not come before the RuntimeError in the script's output")
    failed = next(ln for ln in shown.splitlines() if "Pipeline failed while executing" in ln)
    ctx.note("error line: " + located[0].split("/")[-1][:300])
    ctx.note("pass: " + failed.split("executing", 1)[1].split("]", 1)[0].strip(" [`")[:120])


def fix_2(ctx):
    ctx.skip("the Triton release a kernel was written for (3.2.0 compiles this one for sm75, per "
             "triton-int8-dot-below-sm80-not-floating-point's case) is another environment, not installed here")


def fix_3(ctx):
    ctx.skip("a project's non-Triton attention path: project-specific, not checked")


def control(ctx):
    if not on_gpu(ctx):
        return compiled(ctx, compile_for(ctx, KERNELS, "scores_int8", SIG, TILES, 80), "scores_int8 for sm80")
    t = ctx.torch
    if t.cuda.get_device_capability() < (8, 0):
        ctx.skip("this GPU is below sm80, where the record's failure is what happens")
    q = t.randint(-127, 128, (64, 64), device="cuda", dtype=t.int8)
    k = t.randint(-127, 128, (64, 64), device="cuda", dtype=t.int8)
    out = t.empty(64, 64, device="cuda", dtype=t.float32)
    qs, ks = 0.0123, 0.0456
    ctx.call(_kernels.scores_int8[(1,)], q, k, out, qs, ks, **TILES)
    ref = (q.long().cpu() @ k.long().cpu().T).double().to(q.device) * qs * ks  # CUDA has no int64 matmul
    ctx.close(out, ref.float(), atol=1e-4, rtol=1e-5)
