"""cu_seqlens_k must have batch_size + 1 entries, like cu_seqlens_q."""

from verification.cases._common import cu_seqlens, fa4, randn, varlen_matches

REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flash_attn.cute"]}
TIMEOUT = 600
Q_LENS = [100, 37, 128]
K_LENS = [120, 64, 128]


def _tensors(ctx):
    return (randn(ctx, sum(Q_LENS), 4, 128), randn(ctx, sum(K_LENS), 4, 128), randn(ctx, sum(K_LENS), 4, 128))


def reproduce(ctx):
    q, k, v = _tensors(ctx)
    cu_q = cu_seqlens(ctx, Q_LENS)
    cu_k_short = cu_seqlens(ctx, K_LENS[:2] + [0])[:-1]  # one sequence too few (from another batch)
    ctx.expect_error(fa4().flash_attn_varlen_func, q, k[:184], v[:184], cu_seqlens_q=cu_q, cu_seqlens_k=cu_k_short,
                     max_seqlen_q=128, max_seqlen_k=128)


def fix_1(ctx):
    q, k, v = _tensors(ctx)
    varlen_matches(ctx, q, k, v, cu_seqlens(ctx, Q_LENS), cu_seqlens(ctx, K_LENS))  # one entry per sequence, plus 0


def control(ctx):
    q, k, v = _tensors(ctx)
    varlen_matches(ctx, q, k, v, cu_seqlens(ctx, Q_LENS), cu_seqlens(ctx, K_LENS), causal=True)
