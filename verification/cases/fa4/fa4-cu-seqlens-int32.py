"""cu_seqlens/seqused must be int32 (int64 from torch.cumsum is refused)."""

from verification.cases._common import cu_seqlens, fa4, randn, varlen_matches

REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flash_attn.cute"]}
TIMEOUT = 600
LENS = [100, 37, 128]


def _packed(ctx):
    total = sum(LENS)
    return randn(ctx, total, 4, 128), randn(ctx, total, 4, 128), randn(ctx, total, 4, 128)


def reproduce(ctx):
    t = ctx.torch
    q, k, v = _packed(ctx)
    cu64 = t.nn.functional.pad(t.cumsum(t.tensor(LENS, device=ctx.device), 0), (1, 0))  # int64
    ctx.expect_error(fa4().flash_attn_varlen_func, q, k, v, cu_seqlens_q=cu64, cu_seqlens_k=cu64,
                     max_seqlen_q=128, max_seqlen_k=128)


def fix_1(ctx):
    t = ctx.torch
    q, k, v = _packed(ctx)
    lengths = t.tensor(LENS, device=ctx.device)
    cu = t.nn.functional.pad(t.cumsum(lengths, 0, dtype=t.int32), (1, 0))  # the fix: int32 offsets
    varlen_matches(ctx, q, k, v, cu, cu)


def control(ctx):
    q, k, v = _packed(ctx)
    cu = cu_seqlens(ctx, LENS)
    varlen_matches(ctx, q, k, v, cu, cu, causal=True)
