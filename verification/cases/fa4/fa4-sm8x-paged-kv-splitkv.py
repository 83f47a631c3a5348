"""The SM8x forward has neither paged KV nor split-KV."""

from verification.cases.fa4._paged import paged_decode

REQUIRES = {"cuda": True, "arch": "sm80-sm89", "packages": ["flash_attn.cute"]}
TIMEOUT = 600


def reproduce(ctx):
    paged_decode(ctx, ctx.expect_error)
