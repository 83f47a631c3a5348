"""With math disabled and every allowed backend rejecting the call, SDPA raises 'No available kernel'."""

from verification.cases._common import TOL, ref_attention
from verification.cases.pytorch._sdpa import causal_flash_matches, in_backends, masked_flash, padding_mask, qkv, sdpa

BACKEND = "sdpa"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["torch"]}


def reproduce(ctx):
    masked_flash(ctx, ctx.expect_error)


def fix_1(ctx):
    causal_flash_matches(ctx)


def fix_2(ctx):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    q, k, v = qkv(ctx)
    m = padding_mask(ctx)
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH], set_priority=True):
        out = ctx.call(sdpa, q, k, v, attn_mask=m)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", mask=m), **TOL)


def control(ctx):
    q, k, v = qkv(ctx)
    out = ctx.call(in_backends, ["FLASH_ATTENTION"], sdpa, q, k, v)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **TOL)
