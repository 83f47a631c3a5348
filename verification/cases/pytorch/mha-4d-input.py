"""nn.MultiheadAttention takes (L, E), (L, N, E) or (N, L, E) embeddings: a 4-d query (image
features (N, C, H, W), or tensors already split into heads) fails its shape check.

The check is Python code in torch.nn.functional, the same for every device: the steps use the
GPU where there is one, else the CPU (their notes say which). Inputs are float32; the reference
for fix 1 applies the module's own projections around the fp32 reference attention."""

from verification.cases._common import ref_attention
from verification.cases.pytorch._sdpa import gpu_if_any, qkv, sdpa

BACKEND = "sdpa"
REQUIRES = {"packages": ["torch"]}
FP32 = {"atol": 1e-3, "rtol": 1e-3}
N, C, H, W, HEADS = 2, 32, 8, 8, 4


def _mha(ctx):
    t = ctx.torch
    return t.nn.MultiheadAttention(C, HEADS, batch_first=True).to(ctx.device)


def _features(ctx):
    return ctx.torch.randn(N, C, H, W, device=ctx.device)


def _mha_reference(mha, seq):
    """What MultiheadAttention computes, written out: in-projection, per-head attention, out-projection."""
    import torch.nn.functional as F

    w_q, w_k, w_v = mha.in_proj_weight.chunk(3)
    b_q, b_k, b_v = mha.in_proj_bias.chunk(3)
    n, length, e = seq.shape
    heads = [F.linear(seq, w, b).view(n, length, HEADS, e // HEADS) for w, b in ((w_q, b_q), (w_k, b_k), (w_v, b_v))]
    attn = ref_attention(*heads, layout="bshd").reshape(n, length, e)
    return F.linear(attn, mha.out_proj.weight, mha.out_proj.bias)


def reproduce(ctx):
    gpu_if_any(ctx)
    mha, x = _mha(ctx), _features(ctx)
    ctx.expect_error(mha, x, x, x)


def fix_1(ctx):
    gpu_if_any(ctx)
    mha, x = _mha(ctx), _features(ctx)
    seq = x.flatten(2).transpose(1, 2)  # (N, H*W, C)
    out, _ = ctx.call(mha, seq, seq, seq)
    with ctx.torch.no_grad():
        ctx.close(out, _mha_reference(mha, seq), **FP32)


def fix_2(ctx):
    gpu_if_any(ctx)
    q, k, v = qkv(ctx, b=N, hq=HEADS, hk=HEADS, sq=H * W, sk=H * W, d=C // HEADS, dtype=ctx.torch.float32)
    out = ctx.call(sdpa, q, k, v)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **FP32)
