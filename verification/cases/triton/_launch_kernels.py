"""Attention-shaped Triton kernels that the triton cases launch on a GPU (and, without one, compile
for an sm90 target with _compile.compile_for, which reads them from this file by path).

`next_power_of_2` here is a plain Python function, as a project's own host-side helper is: kernels
that call it are refused by Triton 3.5+ (triton-jit-unsupported-function-referenced). The same
helper wrapped in @triton.constexpr_function lives in _launch_kernels_constexpr.py, since a module
has one global of that name."""

import triton
import triton.language as tl


def next_power_of_2(n):
    return 1 << (n - 1).bit_length()


@triton.jit
def softmax_rows(S, Out, N: tl.constexpr):
    """The softmax of one row of N attention scores (N keys, any count), padded to a power of two
    with a plain host helper."""
    row = tl.program_id(0)
    offs = tl.arange(0, next_power_of_2(N))
    s = tl.load(S + row * N + offs, mask=offs < N, other=float("-inf"))
    p = tl.exp(s - tl.max(s, axis=0))
    tl.store(Out + row * N + offs, p / tl.sum(p, axis=0), mask=offs < N)


@triton.jit
def softmax_rows_padded(S, Out, N: tl.constexpr, N_PAD: tl.constexpr):
    """softmax_rows with the padded width computed on the host and passed as a constexpr."""
    row = tl.program_id(0)
    offs = tl.arange(0, N_PAD)
    s = tl.load(S + row * N + offs, mask=offs < N, other=float("-inf"))
    p = tl.exp(s - tl.max(s, axis=0))
    tl.store(Out + row * N + offs, p / tl.sum(p, axis=0), mask=offs < N)


@triton.jit
def softmax_rows_triton_helper(S, Out, N: tl.constexpr):
    """softmax_rows with Triton's own triton.next_power_of_2 (a constexpr function in 3.5+)."""
    row = tl.program_id(0)
    offs = tl.arange(0, triton.next_power_of_2(N))
    s = tl.load(S + row * N + offs, mask=offs < N, other=float("-inf"))
    p = tl.exp(s - tl.max(s, axis=0))
    tl.store(Out + row * N + offs, p / tl.sum(p, axis=0), mask=offs < N)


@triton.jit
def attn_fwd(Q, K, V, O, scale, L: tl.constexpr, D: tl.constexpr):
    """One program per (batch, head): softmax(q kᵀ · scale) v over L tokens of head dim D."""
    bh = tl.program_id(0)
    rows = tl.arange(0, L)
    cols = tl.arange(0, D)
    idx = bh * L * D + rows[:, None] * D + cols[None, :]
    q = tl.load(Q + idx)
    k = tl.load(K + idx)
    v = tl.load(V + idx)
    s = tl.dot(q, tl.trans(k)) * scale
    p = tl.exp(s - tl.max(s, axis=1)[:, None])
    p = p / tl.sum(p, axis=1)[:, None]
    o = tl.dot(p.to(v.dtype), v)
    tl.store(O + idx, o.to(O.dtype.element_ty))


@triton.jit
def scale_blocks(K, Scale, Out, BLOCK: tl.constexpr):
    """A quantized key cache dequantized block by block: each BLOCK-long block of K times its scale
    (MX-style per-block scaling), the scale read as a number."""
    b = tl.program_id(0)
    offs = b * BLOCK + tl.arange(0, BLOCK)
    s = tl.load(Scale + b)
    tl.store(Out + offs, tl.load(K + offs).to(tl.float32) * s)


@triton.jit
def scale_blocks_e8m0_bytes(K, ScaleBits, Out, BLOCK: tl.constexpr):
    """scale_blocks with the scales handed over as the raw bytes of float8_e8m0fnu (uint8) and
    decoded in the kernel: 2 ** (byte - 127), as the record's fix writes it."""
    b = tl.program_id(0)
    offs = b * BLOCK + tl.arange(0, BLOCK)
    s = tl.load(ScaleBits + b).to(tl.float32)
    scale = tl.exp2(s - 127.0)
    tl.store(Out + offs, tl.load(K + offs).to(tl.float32) * scale)


# ---------------------------------------------------------------- host side


def softmax(kernel, scores, **constexprs):
    """kernel over each row of `scores` (rows, N), fp32."""
    import torch

    out = torch.empty_like(scores)
    kernel[(scores.shape[0],)](scores, out, N=scores.shape[1], **constexprs)
    return out


def attention(q, k, v, scale=None):
    """attn_fwd on (B, H, L, D) contiguous tensors."""
    import torch

    o = torch.empty_like(q)
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    attn_fwd[(q.shape[0] * q.shape[1],)](q, k, v, o, scale, L=q.shape[2], D=q.shape[3])
    return o


def dequantize(kernel, k, scales, block):
    """kernel over a flat key cache `k` with one scale per `block` elements."""
    import torch

    out = torch.empty(k.shape, device=k.device, dtype=torch.float32)
    kernel[(k.numel() // block,)](k, scales, out, BLOCK=block)
    return out
