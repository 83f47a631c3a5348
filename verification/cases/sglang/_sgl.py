"""Helpers for SGLang's FA4 wrapper cases (sglang/kernels/ops/attention/flash_attention_v4.py)."""

WRAPPER = "sglang.kernels.ops.attention.flash_attention_v4"


def wrapper():
    import importlib

    return importlib.import_module(WRAPPER)


def kvcache_inputs(ctx, b=2, cache_len=256, hq=4, hk=2, d=128):
    from verification.cases._common import randn

    t = ctx.torch
    q = randn(ctx, b, 1, hq, d)
    k_cache = randn(ctx, b, cache_len, hk, d)
    v_cache = randn(ctx, b, cache_len, hk, d)
    seqlens = t.tensor([cache_len - 56, cache_len], dtype=t.int32, device=ctx.device)[:b]
    return q, k_cache, v_cache, seqlens


def kvcache_ref(q, k_cache, v_cache, seqlens):
    import torch

    from verification.cases._common import ref_attention

    outs = [ref_attention(q[i:i + 1], k_cache[i:i + 1, :n], v_cache[i:i + 1, :n])
            for i, n in enumerate(seqlens.tolist())]
    return torch.cat(outs, 0)


def kvcache_control(ctx, q, k_cache, v_cache, seqlens):
    """The wrapper's flash_attn_with_kvcache without the refused arguments (one split) runs and
    matches the reference over each sequence's cached tokens."""
    from verification.cases._common import TOL, first

    out = first(ctx.call(wrapper().flash_attn_with_kvcache, q, k_cache, v_cache, cache_seqlens=seqlens, num_splits=1))
    ctx.close(out, kvcache_ref(q, k_cache, v_cache, seqlens), **TOL)
