"""Paged-KV helpers for the FA4 cases."""

from verification.cases._common import randn

PAGE = 128  # a page holds whole key tiles, so TMA loads pages


def paged(ctx, lens=(300, 77), hk=2, hq=4, d=128, sq=None):
    """Dense per-sequence K/V plus the same data scattered into a shuffled page pool."""
    t = ctx.torch
    b = len(lens)
    pages_per = [-(-n // PAGE) for n in lens]
    max_pages = max(pages_per)
    num_pages = b * max_pages + 3
    k_cache = randn(ctx, num_pages, PAGE, hk, d)
    v_cache = randn(ctx, num_pages, PAGE, hk, d)
    perm = t.randperm(num_pages, device=ctx.device)[: b * max_pages].view(b, max_pages).to(t.int32)
    ks = [k_cache[perm[i, : pages_per[i]].long()].flatten(0, 1)[: lens[i]] for i in range(b)]
    vs = [v_cache[perm[i, : pages_per[i]].long()].flatten(0, 1)[: lens[i]] for i in range(b)]
    seqused_k = t.tensor(lens, dtype=t.int32, device=ctx.device)
    q_lens = [sq or 1] * b
    q = randn(ctx, sum(q_lens), hq, d)
    cu_q = t.nn.functional.pad(t.cumsum(t.tensor(q_lens, device=ctx.device), 0, dtype=t.int32), (1, 0))
    return q, k_cache, v_cache, perm, seqused_k, cu_q, ks, vs


def paged_ref(ctx, q, cu_q, ks, vs, causal=False):
    from verification.cases._common import ref_attention

    t = ctx.torch
    cq = cu_q.tolist()
    return t.cat([ref_attention(q[None, cq[i]:cq[i + 1]], ks[i][None], vs[i][None], causal=causal)[0]
                  for i in range(len(ks))], 0)


def paged_decode(ctx, check):
    """One decode token per sequence over the shuffled page pool, through FA4's varlen entry with a
    page_table, run under `check` (the kernels that lack paged KV refuse it)."""
    from verification.cases._common import fa4

    q, k_cache, v_cache, page_table, seqused_k, cu_q, _, _ = paged(ctx)
    return check(fa4().flash_attn_varlen_func, q, k_cache, v_cache, cu_seqlens_q=cu_q, seqused_k=seqused_k,
                 max_seqlen_q=1, page_table=page_table)
