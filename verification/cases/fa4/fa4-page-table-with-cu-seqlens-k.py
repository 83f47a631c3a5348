"""page_table and cu_seqlens_k cannot be combined; give per-sequence lengths as seqused_k."""

from verification.cases._common import TOL, fa4, first
from verification.cases.fa4._paged import paged, paged_ref

REQUIRES = {"cuda": True, "arch": "sm90", "packages": ["flash_attn.cute"]}
TIMEOUT = 600


def reproduce(ctx):
    t = ctx.torch
    q, kc, vc, pt, lens, cu_q, _, _ = paged(ctx)
    cu_k = t.nn.functional.pad(t.cumsum(lens, 0, dtype=t.int32), (1, 0))
    ctx.expect_error(fa4().flash_attn_varlen_func, q, kc, vc, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k,
                     max_seqlen_q=1, page_table=pt)


def fix_1(ctx):
    t = ctx.torch
    q, kc, vc, pt, lens, cu_q, ks, vs = paged(ctx)
    cu_k = t.nn.functional.pad(t.cumsum(lens, 0, dtype=t.int32), (1, 0))
    kv_lens = (cu_k[1:] - cu_k[:-1]).to(t.int32)
    out = first(ctx.call(fa4().flash_attn_varlen_func, q, kc, vc, cu_seqlens_q=cu_q, seqused_k=kv_lens,
                         max_seqlen_q=1, page_table=pt, causal=True))
    ctx.close(out, paged_ref(ctx, q, cu_q, ks, vs, causal=True), **TOL)


def control(ctx):
    q, kc, vc, pt, lens, cu_q, ks, vs = paged(ctx)
    out = first(ctx.call(fa4().flash_attn_varlen_func, q, kc, vc, cu_seqlens_q=cu_q, seqused_k=lens,
                         max_seqlen_q=1, page_table=pt))
    ctx.close(out, paged_ref(ctx, q, cu_q, ks, vs), **TOL)
