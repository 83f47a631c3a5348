"""Paged KV has no SM12x kernel in upstream FA4."""

from verification.cases.fa4._paged import paged_decode

REQUIRES = {"cuda": True, "arch": "sm120+", "packages": ["flash_attn.cute"]}
TIMEOUT = 600


def reproduce(ctx):
    paged_decode(ctx, ctx.expect_error)
