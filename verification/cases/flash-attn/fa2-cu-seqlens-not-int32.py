"""FA2's varlen forward needs int32 cu_seqlens; int64 offsets from torch.cumsum are refused."""

from importlib import import_module

fa = import_module("verification.cases.flash-attn._fa")

BACKEND = "flash-attn"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flash_attn", "flash_attn_2_cuda"]}


def _seqlens(ctx):
    return ctx.torch.tensor(fa.LENS, device=ctx.device)  # int64, as torch.tensor makes it


def reproduce(ctx):
    F = ctx.torch.nn.functional
    q, k, v = fa.packed(ctx)
    cu = F.pad(_seqlens(ctx).cumsum(0), (1, 0))  # int64
    ctx.expect_error(fa.fa2().flash_attn_varlen_func, q, k, v, cu, cu, 128, 128)


def fix_1(ctx):
    t = ctx.torch
    q, k, v = fa.packed(ctx)
    cu = t.nn.functional.pad(_seqlens(ctx).cumsum(0, dtype=t.int32), (1, 0))  # the fix
    fa.varlen_matches(ctx, fa.fa2().flash_attn_varlen_func, q, k, v, cu, cu)


def control(ctx):
    q, k, v = fa.packed(ctx, hk=2)
    cu = fa.cu_seqlens(ctx, fa.LENS)
    fa.varlen_matches(ctx, fa.fa2().flash_attn_varlen_func, q, k, v, cu, cu, causal=True)
