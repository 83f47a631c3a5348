"""Inductor finds no FlexAttention Triton config that fits the GPU's shared memory.

On the H200 (232,448 bytes per block) the prefill template's defaults fit even for a 512-wide
float32 head (see triton/flex-attention-out-of-shared-memory.py); the decode template, which
Inductor picks for short queries (FlexAttention's `flex_decoding`), keeps the whole head dim of
its key/value tiles in shared memory. OpenPipe/ART#647 shows it out of shared memory on an H100
(232,448 bytes) for a decode call, so the steps use a decode shape: one query token over 4,096
keys, head dim 512, float32."""

from verification.cases._common import ref_attention
from verification.cases.pytorch._sdpa import compiled_flex, qkv

BACKEND = "flex-attention"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["torch", "triton"]}
TIMEOUT = 300
# the record is about GPUs with less shared memory than Hopper's; on an H100 (torch 2.11.0) this
# decode call compiles and runs (2026-12-06), so reproduce needs such a GPU
STEP_REQUIRES = {"reproduce": {"arch": "sm86"}}
FP32 = {"atol": 2e-3, "rtol": 2e-3}
BF16 = {"atol": 3e-2, "rtol": 3e-2}
DECODE = dict(b=1, hq=8, hk=8, sq=1, sk=4096, d=512)


def reproduce(ctx):
    q, k, v = qkv(ctx, **DECODE, dtype=ctx.torch.float32)
    ctx.expect_error(compiled_flex(), q, k, v)


def fix_1(ctx):
    """Smaller key/value tiles and one stage through kernel_options."""
    q, k, v = qkv(ctx, **DECODE, dtype=ctx.torch.float32)
    out = ctx.call(compiled_flex(), q, k, v, kernel_options={"BLOCK_N": 16, "num_stages": 1})
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **FP32)


def fix_3(ctx):
    """bf16 inputs: half the shared memory per tile."""
    q, k, v = qkv(ctx, **DECODE, dtype=ctx.torch.bfloat16)
    out = ctx.call(compiled_flex(), q, k, v)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **BF16)


def control(ctx):
    q, k, v = qkv(ctx, **{**DECODE, "d": 64}, dtype=ctx.torch.float32)
    out = ctx.call(compiled_flex(), q, k, v)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **FP32)
