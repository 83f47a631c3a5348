"""Flash SDPA on sm86-sm89 (and sm12x in 2.11) cannot train head dims 193-224 (225-256 with dropout)."""

from verification.cases.pytorch._sdpa import in_backends, qkv, sdpa

BACKEND = "sdpa"
REQUIRES = {"cuda": True, "arch": ["sm86-sm89", "sm120+"], "packages": ["torch"]}


def reproduce(ctx):
    q, k, v = qkv(ctx, d=200, requires_grad=True)
    ctx.expect_warning(in_backends, ["FLASH_ATTENTION"], sdpa, q, k, v)
