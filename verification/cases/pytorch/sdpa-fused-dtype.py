"""Flash SDPA takes fp16/bf16 only: float32 inputs are refused with the dtype list."""

from verification.cases._common import TOL, ref_attention
from verification.cases.pytorch._sdpa import fp32_flash, in_backends, qkv, sdpa

BACKEND = "sdpa"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["torch"]}


def reproduce(ctx):
    fp32_flash(ctx, ctx.expect_warning)


def fix_1(ctx):
    t = ctx.torch
    q, k, v = qkv(ctx, dtype=t.float32)
    with t.autocast("cuda", dtype=t.bfloat16):
        out = ctx.call(in_backends, ["FLASH_ATTENTION"], sdpa, q, k, v)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **TOL)


def fix_2(ctx):
    t = ctx.torch
    q, k, v = qkv(ctx, dtype=t.float32)
    out = ctx.call(in_backends, ["FLASH_ATTENTION", "EFFICIENT_ATTENTION"], sdpa, q, k, v)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), atol=1e-3, rtol=1e-3)
