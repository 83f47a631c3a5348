"""FlashAttention needs k and v in q's dtype; FA3 takes fp8 only when q, k and v all are."""

from importlib import import_module

fa = import_module("verification.cases.flash-attn._fa")

BACKEND = "flash-attn"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flash_attn", "flash_attn_2_cuda"]}
STEP_REQUIRES = {"fix_2": {"cuda": True, "arch": "sm90", "packages": ["flash_attn_interface", "flash_attn_3"]}}


def _mixed(ctx):
    """q and v in bf16, k left in fp32 by a norm/rotary step (q must be 16-bit: an fp32 q fails the
    earlier fp16/bf16 check instead)."""
    q, k, v = fa.qkv(ctx)
    return q, k.float(), v


def reproduce(ctx):
    ctx.expect_error(fa.fa2().flash_attn_func, *_mixed(ctx), causal=True)


def _cast_to_v(q, k, v, **kwargs):
    """The record's fix_1: q and k to v's dtype after the last op that changes them."""
    q, k = q.to(v.dtype), k.to(v.dtype)
    return fa.fa2().flash_attn_func(q, k, v, **kwargs)


def fix_1(ctx):
    fa.runs_and_matches(ctx, _cast_to_v, *_mixed(ctx), causal=True, ref={"causal": True})


def fix_2(ctx):
    # bf16 query, fp8 cache: quantise q too, with (batch, num_heads_k) descales; fp8 tolerance
    t = ctx.torch
    q, k_cache, v_cache, lens = fa.dense_kv(ctx)
    (q8, qs), (k8, ks), (v8, vs) = (fa.to_fp8(ctx, x) for x in (q, k_cache, v_cache))
    bh = (q.shape[0], k_cache.shape[2])
    q_scale_bh, k_scale_bh, v_scale_bh = (s.expand(bh).contiguous() for s in (qs, ks, vs))
    out = ctx.call(fa.fa3().flash_attn_with_kvcache, q8, k8, v8, cache_seqlens=lens, q_descale=q_scale_bh,
                   k_descale=k_scale_bh, v_descale=v_scale_bh)
    assert out.dtype == t.bfloat16
    ref = fa.dense_ref(fa.dequant(q8, qs), fa.dequant(k8, ks), fa.dequant(v8, vs), lens)
    ctx.close(out, ref, **fa.FP8_TOL)


def control(ctx):
    fa.runs_and_matches(ctx, fa.fa2().flash_attn_func, *fa.qkv(ctx), causal=True, ref={"causal": True})
