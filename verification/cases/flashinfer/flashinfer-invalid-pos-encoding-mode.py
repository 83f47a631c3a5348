"""single_decode_with_kv_cache rejects pos_encoding_mode='ROPE' (valid names: NONE, ROPE_LLAMA, ALIBI).

reproduce raises before any build; fix_1 compiles its own single-decode module (fp16, head_dim 128,
NONE), rotating q/k in PyTorch first as the fix suggests for scaled RoPE.
"""

from verification.cases.flashinfer._fi import D, HK, HQ, TOL, fi, randn, ref_attention

REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flashinfer"]}
TIMEOUT = 900
KV_LEN = 77


def _rope(x, pos, theta=1e4):
    """Plain half-split rotary embedding in fp32: x [n, heads, dim], pos [n]."""
    import torch

    half = x.shape[-1] // 2
    freq = theta ** (-torch.arange(half, device=x.device, dtype=torch.float32) / half)
    ang = pos.float()[:, None, None] * freq
    x1, x2 = x.float()[..., :half], x.float()[..., half:]
    return torch.cat([x1 * ang.cos() - x2 * ang.sin(), x2 * ang.cos() + x1 * ang.sin()], -1).to(x.dtype)


def reproduce(ctx):
    q, k, v = randn(ctx, HQ, D), randn(ctx, KV_LEN, HK, D), randn(ctx, KV_LEN, HK, D)
    ctx.expect_error(fi().single_decode_with_kv_cache, q, k, v, pos_encoding_mode="ROPE")


def fix_1(ctx):
    t = ctx.torch
    q, k, v = randn(ctx, HQ, D), randn(ctx, KV_LEN, HK, D), randn(ctx, KV_LEN, HK, D)
    pos = t.arange(KV_LEN, device=ctx.device)
    q, k = _rope(q[None], pos[-1:])[0], _rope(k, pos)
    out = ctx.call(fi().single_decode_with_kv_cache, q, k, v, pos_encoding_mode="NONE")
    ctx.close(out, ref_attention(q[None, None], k[None], v[None])[0, 0], **TOL)
