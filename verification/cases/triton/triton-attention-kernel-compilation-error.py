"""A Triton attention kernel that its front end cannot lower for the arguments it is launched with:
"CompilationError: at L:C:" over the kernel's source, the cause on the last line.

The kernel is a small attention forward (_launch_kernels.attn_fwd: softmax(q kᵀ · scale) v, one
program per batch and head, fp16), launched with head dim 80, a size attention kernels meet (Phi-2,
some ViTs) and that its `tl.arange(0, D)` cannot take: Triton's ranges must be powers of two, one of
the "block sizes and head dimensions the kernel refuses" the record names. On a GPU the first
launch compiles it; without one it is compiled for an sm90 target in a child. The record quotes
the header as Python prints it ("CompilationError: at 198:21:"), so the step compares the printed
line (`triton.compiler.errors.CompilationError: at 4:11:` and the source below it).

Fix 1 runs the record's command on a script that launches the kernel: `python script.py 2>&1 | grep
-n -A40 'CompilationError: at'` must show the header and end with the cause, the text of the
exception Triton chained under the CompilationError (read from the same output). Fix 2 (the
project's Triton release) is not run: the kernel is written for this one. Fix 3 switches the
attention path: PyTorch's SDPA on the same head-dim-80 inputs must match the fp32 reference. The
control is the nearest valid launch of the same kernel: head dim zero-padded to 128 with the
softmax scale of 80, output cut back (GPU: against the fp32 reference; without one: it must compile)."""

from errkb.verify.case import Refuted
from verification.cases._common import TOL, ref_attention
from verification.cases.pytorch._sdpa import sdpa
from verification.cases.triton._launch import compiled_here, kernels, launch_or_compile, on_gpu, printed, shell_traceback

BACKEND = "triton"
REQUIRES = {"packages": ["torch", "triton"]}
TIMEOUT = 300

B, H, L, D, D_PAD = 2, 4, 64, 80, 128
SIG = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "O": "*fp16", "scale": "fp32"}
LAUNCH = ("mod.attention(*[torch.randn(%d, %d, %d, %d, device='cuda', dtype=torch.float16) for _ in range(3)])"
          % (B, H, L, D))


def _qkv(ctx):
    t = ctx.torch
    dtype = t.float16 if ctx.device == "cuda" else t.float32
    return tuple(t.randn(B, H, L, D, device=ctx.device, dtype=dtype) for _ in range(3))


def reproduce(ctx):
    on_gpu(ctx)
    mod = kernels()
    q, k, v = _qkv(ctx)
    exc = ctx.expect_error(printed, launch_or_compile, ctx, lambda: mod.attention(q, k, v), "attn_fwd", SIG,
                           {"L": L, "D": D})
    ctx.note("last line: " + str(exc).strip().splitlines()[-1])


def fix_1(ctx):
    shown, whole = shell_traceback(ctx, kernels().__file__, "attn_fwd", SIG, {"L": L, "D": D}, LAUNCH,
                                   "grep -n -A40 'CompilationError: at'")
    lines = [ln for ln in shown.splitlines() if ln.strip()]
    marker = "The above exception was the direct cause of the following exception:"
    cause = None
    if marker in whole:
        before = [ln for ln in whole.split(marker)[0].splitlines() if ln.strip()]
        cause = before[-1].split(": ", 1)[-1].strip() if before else None
    ctx.observed = {"grep": shown[-2000:], "chained_cause": cause}
    if not lines or "CompilationError: at" not in lines[0]:
        raise Refuted("grep found no 'CompilationError: at' header in the output")
    if cause is None:
        raise Refuted("the output has no chained cause to compare the last line with")
    last = lines[-1].split("-", 1)[-1].strip()  # grep -n prints "<n>-" before context lines
    if last != cause:
        raise Refuted(f"the grep's last line is {last!r}, not the cause {cause!r}")
    ctx.note(f"grep printed {len(lines)} lines; the last: {last!r}")


def fix_2(ctx):
    ctx.skip("the kernel is written for the installed Triton; no other release to match it to here")


def fix_3(ctx):
    on_gpu(ctx)
    q, k, v = _qkv(ctx)
    out = ctx.call(sdpa, q, k, v)
    tol = TOL if ctx.device == "cuda" else {"atol": 1e-4, "rtol": 1e-4}
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **tol)


def control(ctx):
    if not on_gpu(ctx):
        return compiled_here(ctx, "attn_fwd", SIG, {"L": L, "D": D_PAD}, f"attn_fwd with head dim padded to {D_PAD}")
    pad = ctx.torch.nn.functional.pad
    mod = kernels()
    q, k, v = _qkv(ctx)
    out = ctx.call(mod.attention, *(pad(x, (0, D_PAD - D)).contiguous() for x in (q, k, v)), scale=D ** -0.5)
    ctx.close(out[..., :D], ref_attention(q, k, v, layout="bhsd"), **TOL)
