"""flash_attn_with_kvcache refuses rotary cos/sin unless new k/v are appended in the same call."""

from importlib import import_module

fa = import_module("verification.cases.flash-attn._fa")

BACKEND = "flash-attn"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flash_attn", "flash_attn_2_cuda"]}
STEP_REQUIRES = {"fix_2": {"packages": ["flash_attn.layers.rotary"]}}  # its Triton kernel (triton, einops)

B, H, D, CACHE = 2, 4, 128, 256


def _tables(ctx):
    """cos/sin (CACHE, D/2) in the query's dtype, base 10000 (rotary over the whole head dim)."""
    t = ctx.torch
    inv_freq = 10000.0 ** (-t.arange(0, D, 2, device=ctx.device).float() / D)
    angles = t.arange(CACHE, device=ctx.device).float()[:, None] * inv_freq[None, :]
    return angles.cos().to(t.bfloat16), angles.sin().to(t.bfloat16)


def _rotate(x, cos, sin, pos, interleaved):
    """fp32 rotary of x (b, s, h, d), sequence i at positions pos[i], pos[i] + 1, ..."""
    import torch

    x = x.float()
    idx = pos.long()[:, None] + torch.arange(x.shape[1], device=x.device)[None, :]
    c, s = cos.float()[idx][:, :, None, :], sin.float()[idx][:, :, None, :]
    if interleaved:
        x1, x2 = x[..., 0::2], x[..., 1::2]
        return torch.stack((x1 * c - x2 * s, x1 * s + x2 * c), dim=-1).flatten(-2)
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((x1 * c - x2 * s, x1 * s + x2 * c), dim=-1)


def _inputs(ctx):
    return fa.dense_kv(ctx, cache_len=CACHE, hq=H, hk=H, d=D) + _tables(ctx)


def reproduce(ctx):
    q, k_cache, v_cache, lens, cos, sin = _inputs(ctx)
    ctx.expect_error(fa.fa2().flash_attn_with_kvcache, q, k_cache, v_cache, rotary_cos=cos, rotary_sin=sin,
                     cache_seqlens=lens)


def fix_1(ctx):
    # append this step's k/v through the call: FA2 rotates them (and q) at position cache_seqlens
    t = ctx.torch
    q, k_cache, v_cache, lens, cos, sin = _inputs(ctx)
    k_new, v_new = fa.randn(ctx, B, 1, H, D), fa.randn(ctx, B, 1, H, D)
    k_old, v_old = k_cache.clone(), v_cache.clone()
    out = ctx.call(fa.fa2().flash_attn_with_kvcache, q, k_cache, v_cache, k=k_new, v=v_new, rotary_cos=cos,
                   rotary_sin=sin, cache_seqlens=lens)  # rotary_interleaved defaults to True
    k_rot = _rotate(k_new, cos, sin, lens, interleaved=True)
    n = lens.tolist()
    ks = [t.cat([k_old[i, :n[i]].float(), k_rot[i]]) for i in range(B)]
    vs = [t.cat([v_old[i, :n[i]], v_new[i]]) for i in range(B)]
    ctx.close(out, fa.kv_ref(_rotate(q, cos, sin, lens, interleaved=True), ks, vs), **fa.TOL)


def fix_2(ctx):
    # the cache already holds this token (GPT-NeoX-rotated keys): rotate q alone at its position lens - 1
    from flash_attn.layers.rotary import apply_rotary_emb

    q, k_cache, v_cache, lens, cos, sin = _inputs(ctx)
    pos = lens - 1
    q_rot = ctx.call(apply_rotary_emb, q, cos, sin, interleaved=False, seqlen_offsets=pos)
    out = ctx.call(fa.fa2().flash_attn_with_kvcache, q_rot, k_cache, v_cache, cache_seqlens=lens)
    ctx.close(out, fa.dense_ref(_rotate(q, cos, sin, pos, interleaved=False), k_cache, v_cache, lens), **fa.TOL)


def control(ctx):
    q, k_cache, v_cache, lens, _, _ = _inputs(ctx)
    out = ctx.call(fa.fa2().flash_attn_with_kvcache, q, k_cache, v_cache, cache_seqlens=lens)
    ctx.close(out, fa.dense_ref(q, k_cache, v_cache, lens), **fa.TOL)
