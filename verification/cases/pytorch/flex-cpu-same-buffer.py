"""Compiled FlexAttention on CPU refuses q, k and v that are one buffer."""

from verification.cases._common import ref_attention
from verification.cases.pytorch._sdpa import FP32, compiled_flex

BACKEND = "flex-attention"
REQUIRES = {"packages": ["torch"], "cpu": True}
TIMEOUT = 600


def reproduce(ctx):
    x = ctx.torch.randn(1, 2, 128, 16)
    ctx.expect_error(compiled_flex(), x, x, x)


def fix_1(ctx):
    x = ctx.torch.randn(1, 2, 128, 16)
    out = ctx.call(compiled_flex(), x, x.clone(), x.clone())
    ctx.close(out, ref_attention(x, x, x, layout="bhsd"), **FP32)
