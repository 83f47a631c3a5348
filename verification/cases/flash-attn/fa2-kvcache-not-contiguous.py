"""flash_attn_with_kvcache asserts that k_cache/v_cache have stride 1 in head_dim (no silent copy)."""

from importlib import import_module

fa = import_module("verification.cases.flash-attn._fa")

BACKEND = "flash-attn"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flash_attn", "flash_attn_2_cuda"]}


def _head_dim_outer(ctx):
    """The same cache values stored (b, h_k, d, max_len) and permuted to (b, max_len, h_k, d)."""
    q, k_cache, v_cache, lens = fa.dense_kv(ctx)
    bad = [x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2) for x in (k_cache, v_cache)]
    assert bad[0].stride(-1) != 1 and ctx.torch.equal(bad[0], k_cache)
    return q, bad[0], bad[1], lens


def reproduce(ctx):
    q, k_cache, v_cache, lens = _head_dim_outer(ctx)
    ctx.expect_error(fa.fa2().flash_attn_with_kvcache, q, k_cache, v_cache, cache_seqlens=lens)


def fix_1(ctx):
    # allocated (b, max_len, h_k, d): head_dim innermost
    q, k_cache, v_cache, lens = fa.dense_kv(ctx)
    out = ctx.call(fa.fa2().flash_attn_with_kvcache, q, k_cache, v_cache, cache_seqlens=lens)
    ctx.close(out, fa.dense_ref(q, k_cache, v_cache, lens), **fa.TOL)


def fix_2(ctx):
    q, k_cache, v_cache, lens = _head_dim_outer(ctx)
    out = ctx.call(fa.fa2().flash_attn_with_kvcache, q, k_cache.contiguous(), v_cache.contiguous(), cache_seqlens=lens)
    ctx.close(out, fa.dense_ref(q, k_cache, v_cache, lens), **fa.TOL)


def control(ctx):
    # a well-laid-out cache that the call appends one token to, in place
    t = ctx.torch
    q, k_cache, v_cache, lens = fa.dense_kv(ctx)
    k_new, v_new = fa.randn(ctx, 2, 1, 2, 128), fa.randn(ctx, 2, 1, 2, 128)
    out = ctx.call(fa.fa2().flash_attn_with_kvcache, q, k_cache, v_cache, k=k_new, v=v_new, cache_seqlens=lens)
    rows = t.arange(2, device=ctx.device)
    ctx.close(k_cache[rows, lens.long()], k_new[:, 0], atol=0.0, what="appended keys")
    ctx.close(out, fa.dense_ref(q, k_cache, v_cache, lens + 1), **fa.TOL)
