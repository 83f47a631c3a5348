"""memory_efficient_attention(..., op=<one kernel pair>) checks only that kernel and raises
ValueError 'Operator `memory_efficient_attention` does not support inputs:' with its reasons.

On a CPU-only machine with the real wheel (0.0.28.post3 with torch 2.5.1): FlashAttention forced
with op=MemoryEfficientAttentionFlashAttentionOp on head dim 512. Both fixes end in a kernel
running on a GPU: skipped."""

from verification.cases.xformers._xf import cpu_qkv, mea

BACKEND = "xformers"
REQUIRES = {"packages": ["torch", "xformers.ops"]}
TIMEOUT = 180


def reproduce(ctx):
    import xformers.ops as xops

    ctx.expect_error(mea, *cpu_qkv(ctx, d=512), op=xops.MemoryEfficientAttentionFlashAttentionOp)


def fix_1(ctx):
    ctx.skip("the dispatched kernel running needs a GPU")


def fix_2(ctx):
    ctx.skip("the CUTLASS kernel running needs a GPU")
