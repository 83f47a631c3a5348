"""Flash SDPA outside its architecture range (pre-Ampere, or newer than the release knows)."""

from verification.cases.pytorch._sdpa import in_backends, qkv, sdpa

BACKEND = "sdpa"
REQUIRES = {"cuda": True, "arch": ["sm70-sm75", "sm100+"], "packages": ["torch"]}


def reproduce(ctx):
    q, k, v = qkv(ctx)
    ctx.expect_warning(in_backends, ["FLASH_ATTENTION"], sdpa, q, k, v)
