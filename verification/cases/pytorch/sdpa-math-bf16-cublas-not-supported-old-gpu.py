"""bf16 SDPA on a GPU older than Ampere: SDPA falls back to its math path, whose bf16 batched GEMM
cuBLAS refuses (CUBLAS_STATUS_NOT_SUPPORTED from cublasGemmStridedBatchedEx with CUDA_R_16BF).

reproduce, fix 1 (fp16/fp32 instead) and fix 3 (attention in float32, cast back) are about such a
GPU (sm5x-sm7x) and run only there. fix 2 runs on any CUDA GPU: the fix's dtype choice,
torch.cuda.is_bf16_supported(including_emulation=False), must answer True exactly when the device
has compute capability 8.0 or more, and SDPA in the chosen dtype must match fp32 attention."""

from errkb.verify.case import Refuted
from verification.cases._common import TOL, ref_attention
from verification.cases.pytorch._sdpa import qkv, sdpa

BACKEND = "sdpa"
REQUIRES = {"cuda": True, "arch": "sm50-sm75", "packages": ["torch"]}
STEP_REQUIRES = {"fix_2": {"cuda": True, "arch": "sm50+"}}


def reproduce(ctx):
    q, k, v = qkv(ctx, d=64, dtype=ctx.torch.bfloat16)
    ctx.expect_error(sdpa, q, k, v)


def fix_1(ctx):
    t = ctx.torch
    for dtype in (t.float16, t.float32):
        q, k, v = qkv(ctx, d=64, dtype=dtype)
        ctx.close(ctx.call(sdpa, q, k, v), ref_attention(q, k, v, layout="bhsd"), what=str(dtype), **TOL)


def fix_2(ctx):
    t = ctx.torch
    native = t.cuda.is_bf16_supported(including_emulation=False)
    default = t.cuda.is_bf16_supported()
    cc = ctx.cc
    ctx.note(f"compute capability {cc}: is_bf16_supported() {default}, including_emulation=False {native}")
    if native != (cc >= (8, 0)):
        raise Refuted(f"including_emulation=False answered {native} on compute capability {cc}")
    dtype = t.bfloat16 if native else t.float16  # the fix's line
    q, k, v = qkv(ctx, d=64, dtype=dtype)
    ctx.close(ctx.call(sdpa, q, k, v), ref_attention(q, k, v, layout="bhsd"), **TOL)


def fix_3(ctx):
    q, k, v = qkv(ctx, d=64, dtype=ctx.torch.bfloat16)
    out = ctx.call(lambda: sdpa(q.float(), k.float(), v.float()).to(q.dtype))
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **TOL)
