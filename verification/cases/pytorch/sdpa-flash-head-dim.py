"""Flash SDPA needs equal q/k/v head dims of at most 256."""

from verification.cases._common import TOL, ref_attention
from verification.cases.pytorch._sdpa import in_backends, qkv, sdpa

BACKEND = "sdpa"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["torch"]}


def reproduce(ctx):
    q, k, v = qkv(ctx, d=320)
    ctx.expect_warning(in_backends, ["FLASH_ATTENTION"], sdpa, q, k, v)


def fix_1(ctx):
    q, k, v = qkv(ctx, d=320)
    out = ctx.call(in_backends, ["FLASH_ATTENTION", "EFFICIENT_ATTENTION"], sdpa, q, k, v)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **TOL)


def fix_2(ctx):
    F = ctx.torch.nn.functional
    q, k, v = qkv(ctx, d=128, dv=64)
    v_pad = F.pad(v, (0, q.size(-1) - v.size(-1)))
    out = ctx.call(in_backends, ["FLASH_ATTENTION"], sdpa, q, k, v_pad)[..., : v.size(-1)]
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **TOL)
