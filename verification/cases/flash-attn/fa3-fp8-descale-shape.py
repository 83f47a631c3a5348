"""FA3's fp8 descale factors must each be shaped (batch_size, num_heads_k); a per-tensor (1,) scale is refused."""

from importlib import import_module

fa = import_module("verification.cases.flash-attn._fa")

BACKEND = "flash-attn"
REQUIRES = {"cuda": True, "arch": "sm90", "packages": ["flash_attn_interface", "flash_attn_3"]}

# fp8 inputs with per-tensor scales; outputs compared with the fp32 reference of the dequantised
# values within the fp8 tolerance (see _fa.FP8_TOL)


def _quantised(ctx):
    """Per-tensor e4m3 q, k, v (GQA: 4 query heads, 2 KV heads) and their scales as (1,) tensors."""
    q, k, v = fa.qkv(ctx, hk=2)
    (q8, qs), (k8, ks), (v8, vs) = (fa.to_fp8(ctx, x) for x in (q, k, v))
    return q8, k8, v8, qs.reshape(1), ks.reshape(1), vs.reshape(1)


def _dequant_ref(q8, k8, v8, qs, ks, vs, **ref):
    return fa.ref_attention(fa.dequant(q8, qs), fa.dequant(k8, ks), fa.dequant(v8, vs), **ref)


def reproduce(ctx):
    q8, k8, v8, qs, ks, vs = _quantised(ctx)
    ctx.expect_error(fa.fa3().flash_attn_func, q8, k8, v8, q_descale=qs, k_descale=ks, v_descale=vs)


def fix_1(ctx):
    q8, k8, v8, q_scale, k_scale, v_scale = _quantised(ctx)
    b, h_k = q8.shape[0], k8.shape[-2]
    as_bh = lambda s: s.float().reshape(1, 1).expand(b, h_k)  # noqa: E731 - as in the record
    out = ctx.call(fa.fa3().flash_attn_func, q8, k8, v8, q_descale=as_bh(q_scale), k_descale=as_bh(k_scale),
                   v_descale=as_bh(v_scale))
    ctx.close(fa.first(out), _dequant_ref(q8, k8, v8, q_scale, k_scale, v_scale), **fa.FP8_TOL)


def control(ctx):
    # no descales at all (factors of 1) on inputs quantised without scaling
    q, k, v = fa.qkv(ctx, hk=2)
    q8, k8, v8 = (fa.to_fp8(ctx, x, per_tensor=False)[0] for x in (q, k, v))
    out = ctx.call(fa.fa3().flash_attn_func, q8, k8, v8, causal=True)
    ctx.close(fa.first(out), fa.ref_attention(q8.float(), k8.float(), v8.float(), causal=True), **fa.FP8_TOL)
