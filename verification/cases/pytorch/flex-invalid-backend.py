"""kernel_options['BACKEND'] must be one of AUTO, TRITON, FLASH, TRITON_DECODE (exact case)."""

from verification.cases._common import TOL, ref_attention
from verification.cases.pytorch._sdpa import compiled_flex, qkv

BACKEND = "flex-attention"
REQUIRES = {"packages": ["torch"], "cpu": True}
STEP_REQUIRES = {"fix_1": {"cuda": True, "arch": "sm90+", "packages": ["flash_attn.cute"]}}
TIMEOUT = 600


def reproduce(ctx):
    from torch.nn.attention.flex_attention import flex_attention

    t = ctx.torch
    q, k, v = qkv(ctx, b=1, d=16, dtype=t.float32)
    ctx.expect_error(flex_attention, q, k, v, kernel_options={"BACKEND": "flash"})


def fix_1(ctx):
    q, k, v = qkv(ctx, b=1, d=64)
    out = ctx.call(compiled_flex(), q, k, v, kernel_options={"BACKEND": "FLASH"})
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **TOL)
