"""Paged KV has no SM12x kernel in upstream FA4."""

from verification.cases._common import fa4
from verification.cases.fa4._paged import paged

REQUIRES = {"cuda": True, "arch": "sm120+", "packages": ["flash_attn.cute"]}
TIMEOUT = 600


def reproduce(ctx):
    q, kc, vc, pt, lens, cu_q, _, _ = paged(ctx)
    ctx.expect_error(fa4().flash_attn_varlen_func, q, kc, vc, cu_seqlens_q=cu_q, seqused_k=lens,
                     max_seqlen_q=1, page_table=pt)
