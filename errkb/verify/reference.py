"""fp32 reference attention that fixes and controls are compared against."""

from __future__ import annotations

import math


def attention(q, k, v, *, layout: str = "bshd", causal: bool = False, causal_align: str = "bottom_right",
              scale: float | None = None, mask=None, window: tuple[int | None, int | None] = (None, None),
              softcap: float | None = None, sink=None, score_mod=None):
    """Plain attention in float32.

    layout 'bshd' (FlashAttention: batch, seqlen, heads, dim) or 'bhsd' (SDPA). K/V heads may
    divide Q heads (GQA). causal_align 'bottom_right' (FlashAttention) or 'top_left' (SDPA's
    is_causal). mask: bool (True keeps) or additive, broadcastable to (B, H, Sq, Sk).
    sink: per-head logit (H,) that joins the softmax denominator. Returns q's layout, float32.
    """
    import torch

    if layout == "bshd":
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
    q, k, v = (t.float() for t in (q, k, v))
    hq, hk = q.shape[1], k.shape[1]
    if hq != hk:
        k = k.repeat_interleave(hq // hk, dim=1)
        v = v.repeat_interleave(hq // hk, dim=1)
    sq, sk = q.shape[-2], k.shape[-2]
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = torch.matmul(q, k.transpose(-1, -2)) * scale
    if softcap:
        s = softcap * torch.tanh(s / softcap)
    if score_mod is not None:
        s = score_mod(s)
    i = torch.arange(sq, device=s.device)[:, None]
    j = torch.arange(sk, device=s.device)[None, :]
    shift = (sk - sq) if causal_align == "bottom_right" else 0
    keep = torch.ones(sq, sk, dtype=torch.bool, device=s.device)
    if causal:
        keep &= j <= i + shift
    left, right = window
    if left is not None and left >= 0:
        keep &= j >= i + shift - left
    if right is not None and right >= 0:
        keep &= j <= i + shift + right
    s = s.masked_fill(~keep, float("-inf"))
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else s + mask.float()
    if sink is not None:
        sink_col = sink.float().view(1, -1, 1, 1).expand(s.shape[0], -1, sq, 1)
        p = torch.softmax(torch.cat([s, sink_col], dim=-1), dim=-1)[..., :-1]
    else:
        p = torch.softmax(s, dim=-1)
    p = torch.nan_to_num(p, nan=0.0)
    out = torch.matmul(p, v.float())
    return out.transpose(1, 2) if layout == "bshd" else out
