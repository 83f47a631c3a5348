"""Helpers for the FlashAttention-2 and FlashAttention-3 cases (flash-attn 2.8.3: `flash_attn` with
`flash_attn_2_cuda`, and the hopper/ build imported as `flash_attn_interface` over `flash_attn_3._C`).

Every tensor here has head dim 128 unless a case says otherwise: that is the one FA2 kernel
template and the main FA3 one in the reduced builds the H200 runs (see each case's comments).
"""

from verification.cases._common import TOL, cu_seqlens, first, qkv, randn, ref_attention, varlen_ref  # noqa: F401

# fp8 e4m3 inputs vs an fp32 reference on the dequantised values: FA3 also rounds the softmax
# probabilities to e4m3 before the PV product (a CPU simulation of that rounding gives ~2e-2 max on
# 128-key rows, up to ~5e-2 on causal rows that see few keys)
FP8_TOL = {"atol": 1e-1, "rtol": 1e-1}
# what a binary says for a call that needs something it was compiled without: upstream's text for a
# FLASHATTENTION_DISABLE_<feature> build, and the text of the kernels left out of the reduced builds
# the H200 runs (see verification/device/flash-attn-install.sh)
BUILT_WITHOUT = ("This flash attention build does not support", "errkb reduced FA2 build", "errkb reduced FA3 build")
LENS = [100, 37, 128]  # packed varlen sequences, each at most 128 long


def fa2():
    import flash_attn

    return flash_attn


def fa2_raw():
    import flash_attn_2_cuda

    return flash_attn_2_cuda


def fa3():
    import flash_attn_interface

    return flash_attn_interface


def fa3_op():
    """The compiled FA3 operators (torch.ops.flash_attn_3), which take `out=` unlike the wrappers."""
    import torch

    fa3()  # importing the interface registers the operators
    return torch.ops.flash_attn_3


def matches(ctx, out, q, k, v, tol=TOL, **ref):
    """A (batch, seqlen, heads, dim) output matches the fp32 reference of q, k, v."""
    return ctx.close(first(out), ref_attention(q, k, v, **ref), **tol)


def runs_and_matches(ctx, fn, q, k, v, *, tol=TOL, ref=None, **kwargs):
    """fn(q, k, v, **kwargs) is a claimed-good call: it runs and matches the reference."""
    out = first(build_call(ctx, fn, q, k, v, **kwargs))
    return matches(ctx, out, q, k, v, tol=tol, **(ref or {}))


def build_call(ctx, fn, *args, **kwargs):
    """ctx.call, except that a feature or kernel the FA2/FA3 binary was compiled without makes the
    step skipped (the binary cannot judge the claim), not refuted."""
    from errkb.verify.case import Refuted

    try:
        return ctx.call(fn, *args, **kwargs)
    except Refuted as exc:
        cause = exc.__cause__
        if cause is not None and any(text in str(cause) for text in BUILT_WITHOUT):
            ctx.skip(f"this FlashAttention binary was compiled without a feature or kernel the step needs: {cause}")
        raise


# ---------------------------------------------------------------- packed (varlen) sequences


def packed(ctx, lens=LENS, hq=4, hk=4, d=128, dtype=None):
    """q, k, v as (total_tokens, heads, dim) for the given sequence lengths."""
    total = sum(lens)
    return tuple(randn(ctx, total, h, d, dtype=dtype) for h in (hq, hk, hk))


def varlen_matches(ctx, fn, q, k, v, cu_q, cu_k, causal=False, **kwargs):
    """A varlen forward over packed sequences (each at most 128 long) runs and matches the reference."""
    out = first(build_call(ctx, fn, q, k, v, cu_q, cu_k, 128, 128, causal=causal, **kwargs))
    return ctx.close(out, varlen_ref(q, k, v, cu_q, cu_k, causal=causal), **TOL)


# ---------------------------------------------------------------- KV caches (one decode token per row)


def kv_ref(q, ks, vs):
    """Reference for one query row per sequence over that sequence's keys/values."""
    import torch

    return torch.cat([ref_attention(q[i:i + 1], ks[i][None], vs[i][None]) for i in range(len(ks))], 0)


def dense_kv(ctx, lens=(200, 77), cache_len=256, hq=4, hk=2, d=128):
    """q (b, 1, hq, d), a dense cache (b, cache_len, hk, d) and its int32 lengths."""
    t = ctx.torch
    b = len(lens)
    q = randn(ctx, b, 1, hq, d)
    k_cache, v_cache = randn(ctx, b, cache_len, hk, d), randn(ctx, b, cache_len, hk, d)
    return q, k_cache, v_cache, t.tensor(lens, dtype=t.int32, device=ctx.device)


def dense_ref(q, k_cache, v_cache, seqlens):
    n = seqlens.tolist()
    return kv_ref(q, [k_cache[i, :n[i]] for i in range(len(n))], [v_cache[i, :n[i]] for i in range(len(n))])


def paged_kv(ctx, lens=(300, 77), page=256, hq=4, hk=2, d=128):
    """A shuffled page pool (n_pages, page, hk, d) holding one sequence per row of an int32 block
    table, plus the same keys/values per sequence for the reference."""
    t = ctx.torch
    b = len(lens)
    per = [-(-n // page) for n in lens]
    width = max(per)
    n_pages = b * width + 3
    k_pages, v_pages = randn(ctx, n_pages, page, hk, d), randn(ctx, n_pages, page, hk, d)
    table = t.randperm(n_pages, device=ctx.device)[: b * width].view(b, width).to(t.int32)
    ks = [k_pages[table[i, :per[i]].long()].flatten(0, 1)[:lens[i]] for i in range(b)]
    vs = [v_pages[table[i, :per[i]].long()].flatten(0, 1)[:lens[i]] for i in range(b)]
    q = randn(ctx, b, 1, hq, d)
    return q, k_pages, v_pages, table, t.tensor(lens, dtype=t.int32, device=ctx.device), ks, vs


# ---------------------------------------------------------------- fp8 (FA3 on Hopper)


def to_fp8(ctx, x, per_tensor=True):
    """e4m3 copy of x and the fp32 scale with x ~= x8 * scale (scale 1 when per_tensor is False)."""
    t = ctx.torch
    scale = x.float().abs().amax() / 448.0 if per_tensor else t.ones((), device=x.device)
    return (x.float() / scale).to(t.float8_e4m3fn), scale.float()


def dequant(x8, scale):
    return x8.float() * scale


def padded_v(fn):
    """fn wrapped to zero-pad V up to the Q/K head size and cut the output back (zero V columns give
    zero output columns, so the result is exact): the padding fix several records give."""

    def call(q, k, v, **kwargs):
        import torch

        dv = v.shape[-1]
        return first(fn(q, k, torch.nn.functional.pad(v, (0, q.shape[-1] - dv)), **kwargs))[..., :dv]

    return call
