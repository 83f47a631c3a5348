"""Helpers shared by the cases (not a case: the runner skips files starting with '_')."""

from __future__ import annotations

from errkb.verify.reference import attention as ref_attention  # noqa: F401 - re-exported

# bf16/fp16 kernels vs an fp32 reference, inputs ~N(0, 1), outputs |o| <= ~1
TOL = {"atol": 2e-2, "rtol": 2e-2}
FA4_SM90 = {"cuda": True, "arch": "sm90", "packages": ["flash_attn.cute"]}
FA4_ANY = {"cuda": True, "arch": "sm80+", "packages": ["flash_attn.cute"]}


def randn(ctx, *shape, dtype=None, requires_grad=False):
    t = ctx.torch
    x = t.randn(*shape, device=ctx.device, dtype=dtype or t.bfloat16)
    return x.requires_grad_(requires_grad) if requires_grad else x


def qkv(ctx, b=2, sq=128, sk=128, hq=4, hk=4, d=128, dv=None, dtype=None, requires_grad=False, layout="bshd"):
    """Random q, k, v in FlashAttention's (batch, seqlen, heads, dim) or SDPA's (batch, heads, seqlen, dim)."""
    dv = d if dv is None else dv
    if layout == "bshd":
        shapes = ((b, sq, hq, d), (b, sk, hk, d), (b, sk, hk, dv))
    else:
        shapes = ((b, hq, sq, d), (b, hk, sk, d), (b, hk, sk, dv))
    return tuple(randn(ctx, *s, dtype=dtype, requires_grad=requires_grad) for s in shapes)


def first(result):
    """FA4 returns (out, lse); SGLang's wrappers may return out alone."""
    return result[0] if isinstance(result, tuple) else result


def fa4():
    from flash_attn.cute import interface

    return interface


def cu_seqlens(ctx, lengths):
    t = ctx.torch
    return t.nn.functional.pad(t.cumsum(t.tensor(lengths, device=ctx.device), 0, dtype=t.int32), (1, 0))


def varlen_ref(q, k, v, cu_q, cu_k, **kw):
    """Reference for packed (total, heads, dim) tensors: attention per sequence, concatenated."""
    import torch

    outs = []
    cq, ck = cu_q.tolist(), cu_k.tolist()
    for i in range(len(cq) - 1):
        outs.append(ref_attention(q[None, cq[i]:cq[i + 1]], k[None, ck[i]:ck[i + 1]], v[None, ck[i]:ck[i + 1]],
                                  **kw)[0])
    return torch.cat(outs, 0)


def varlen_matches(ctx, q, k, v, cu_q, cu_k, causal=False):
    """FA4's varlen forward on packed sequences (each at most 128 long) runs and matches the reference."""
    out = first(ctx.call(fa4().flash_attn_varlen_func, q, k, v, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k,
                         max_seqlen_q=128, max_seqlen_k=128, causal=causal))
    ctx.close(out, varlen_ref(q, k, v, cu_q, cu_k, causal=causal), **TOL)


def padded_head_dim_matches(ctx, q, k, v, width):
    """Zero-pad the head dim to `width`, keep the softmax scale of the real one, cut the output
    back: FA4 then runs a head dim it accepts, with the same numbers."""
    pad = ctx.torch.nn.functional.pad
    d = q.shape[-1]
    out = first(ctx.call(fa4().flash_attn_func, *(pad(x, (0, width - d)) for x in (q, k, v)),
                         softmax_scale=d ** -0.5))[..., :d]
    ctx.close(out, ref_attention(q, k, v), **TOL)
