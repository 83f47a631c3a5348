"""page_table must be int32 (an int64 block table is refused)."""

from verification.cases._common import TOL, fa4, first
from verification.cases.fa4._paged import paged, paged_ref

REQUIRES = {"cuda": True, "arch": "sm90", "packages": ["flash_attn.cute"]}
TIMEOUT = 600


def reproduce(ctx):
    q, kc, vc, pt, lens, cu_q, _, _ = paged(ctx)
    ctx.expect_error(fa4().flash_attn_varlen_func, q, kc, vc, cu_seqlens_q=cu_q, seqused_k=lens,
                     max_seqlen_q=1, page_table=pt.long())


def fix_1(ctx):
    t = ctx.torch
    q, kc, vc, pt, lens, cu_q, ks, vs = paged(ctx)
    block_table = pt.to(t.int32).contiguous()
    out = first(ctx.call(fa4().flash_attn_varlen_func, q, kc, vc, cu_seqlens_q=cu_q, seqused_k=lens,
                         max_seqlen_q=1, page_table=block_table))
    ctx.close(out, paged_ref(ctx, q, cu_q, ks, vs), **TOL)


def control(ctx):
    q, kc, vc, pt, lens, cu_q, ks, vs = paged(ctx, sq=4)
    out = first(ctx.call(fa4().flash_attn_varlen_func, q, kc, vc, cu_seqlens_q=cu_q, seqused_k=lens,
                         max_seqlen_q=4, page_table=pt, causal=True))
    ctx.close(out, paged_ref(ctx, q, cu_q, ks, vs, causal=True), **TOL)
