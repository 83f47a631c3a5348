"""Small Triton kernels for the triton cases, compiled by _compile.py (Triton reads a kernel's
source from its file, so they live here rather than in a string). Attention-shaped: the score
tile of one query block against one key block, as an attention kernel's inner loop computes it."""

import triton
import triton.language as tl


@triton.jit
def scores_cached_k(Q, K, Out, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr):
    """Q (fp16) against a K cache of whatever element type K points to, widened to fp16 first,
    as attention kernels reading an fp8 KV cache do."""
    m = tl.arange(0, BLOCK_M)
    n = tl.arange(0, BLOCK_N)
    d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + m[:, None] * HEAD_DIM + d[None, :])
    k = tl.load(K + n[:, None] * HEAD_DIM + d[None, :]).to(tl.float16)
    s = tl.dot(q, tl.trans(k))
    tl.store(Out + m[:, None] * BLOCK_N + n[None, :], s)


@triton.jit
def scores_trans_b(Q, K, Out, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr):
    """The same product written with the pre-2.0 keyword, as the FlashAttention Triton prototype does."""
    m = tl.arange(0, BLOCK_M)
    n = tl.arange(0, BLOCK_N)
    d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + m[:, None] * HEAD_DIM + d[None, :])
    k = tl.load(K + n[:, None] * HEAD_DIM + d[None, :])
    s = tl.dot(q, k, trans_b=True)
    tl.store(Out + m[:, None] * BLOCK_N + n[None, :], s)


@triton.jit
def scores_trans(Q, K, Out, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr):
    """The product with an explicit tl.trans (the record's fix 2)."""
    m = tl.arange(0, BLOCK_M)
    n = tl.arange(0, BLOCK_N)
    d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + m[:, None] * HEAD_DIM + d[None, :])
    k = tl.load(K + n[:, None] * HEAD_DIM + d[None, :])
    s = tl.dot(q, tl.trans(k))
    tl.store(Out + m[:, None] * BLOCK_N + n[None, :], s)


@triton.jit
def softmax_rows(S, Out, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """The softmax of a tile of attention scores, row by row (no tl.dot: it compiles wherever the
    target's matrix instructions are not what is at stake, as for the assembler records)."""
    m = tl.arange(0, BLOCK_M)
    n = tl.arange(0, BLOCK_N)
    s = tl.load(S + m[:, None] * BLOCK_N + n[None, :])
    p = tl.exp(s - tl.max(s, axis=1)[:, None])
    tl.store(Out + m[:, None] * BLOCK_N + n[None, :], p / tl.sum(p, axis=1)[:, None])


@triton.jit
def exp_scores(S, Out, scale, BLOCK: tl.constexpr):
    """exp(scale * s) over a block of attention scores: element by element, nothing that crosses
    lanes (no warp shuffles, no tl.dot)."""
    i = tl.arange(0, BLOCK)
    tl.store(Out + i, tl.exp(tl.load(S + i) * scale))


@triton.jit
def scores_trans_f32(Q, K, Out, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr):
    """scores_trans with both tiles widened to fp32 before tl.dot (a fix for 16-bit dots on sm70/sm75)."""
    m = tl.arange(0, BLOCK_M)
    n = tl.arange(0, BLOCK_N)
    d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + m[:, None] * HEAD_DIM + d[None, :]).to(tl.float32)
    k = tl.load(K + n[:, None] * HEAD_DIM + d[None, :]).to(tl.float32)
    s = tl.dot(q, tl.trans(k))
    tl.store(Out + m[:, None] * BLOCK_N + n[None, :], s)


@triton.jit
def scores_int8(Q, K, Out, q_scale, k_scale, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr):
    """Q·Kᵀ of int8-quantized tiles, rescaled to fp32 by per-block scales, as quantized attention kernels
    (SageAttention's Triton QK kernel) compute their scores: tl.dot on int8 operands."""
    m = tl.arange(0, BLOCK_M)
    n = tl.arange(0, BLOCK_N)
    d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + m[:, None] * HEAD_DIM + d[None, :])
    k = tl.load(K + d[:, None] + n[None, :] * HEAD_DIM)
    s = tl.dot(q, k).to(tl.float32) * q_scale * k_scale
    tl.store(Out + m[:, None] * BLOCK_N + n[None, :], s)


@triton.jit
def row_norms_keep_dims(X, Out, BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr):
    """Each row of a key block divided by its L2 norm, the norm kept as a column with keep_dims=True
    (Triton 3.0 and later), as block-sparse attention kernels score block similarity."""
    m = tl.arange(0, BLOCK_M)
    d = tl.arange(0, HEAD_DIM)
    x = tl.load(X + m[:, None] * HEAD_DIM + d[None, :]).to(tl.float32)
    norm = tl.sqrt(tl.sum(x * x, axis=1, keep_dims=True))
    tl.store(Out + m[:, None] * HEAD_DIM + d[None, :], x / norm)


@triton.jit
def row_norms_indexed(X, Out, BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr):
    """row_norms_keep_dims without the keyword: the reduced column restored by indexing with None."""
    m = tl.arange(0, BLOCK_M)
    d = tl.arange(0, HEAD_DIM)
    x = tl.load(X + m[:, None] * HEAD_DIM + d[None, :]).to(tl.float32)
    norm = tl.sqrt(tl.sum(x * x, axis=1))[:, None]
    tl.store(Out + m[:, None] * HEAD_DIM + d[None, :], x / norm)
