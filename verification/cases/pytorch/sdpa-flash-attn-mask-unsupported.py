"""Flash SDPA has no attn_mask: forcing flash with a mask prints this reason."""

from verification.cases.pytorch._sdpa import causal_flash_matches, masked_flash, masked_with_efficient_matches

BACKEND = "sdpa"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["torch"]}


def reproduce(ctx):
    masked_flash(ctx, ctx.expect_warning)


def fix_1(ctx):
    causal_flash_matches(ctx)


def fix_2(ctx):
    masked_with_efficient_matches(ctx)
