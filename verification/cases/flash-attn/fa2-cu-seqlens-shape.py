"""FA2's varlen forward needs cu_seqlens as 1-D tensors of batch_size + 1 offsets; a 2-D one is refused."""

from importlib import import_module

fa = import_module("verification.cases.flash-attn._fa")

BACKEND = "flash-attn"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flash_attn", "flash_attn_2_cuda"]}

# fix_2 (describe packing with a 2-D mask or position_ids in the wrapper) is advice about how a
# model wrapper builds the offsets: no call of its own to run.


def reproduce(ctx):
    q, k, v = fa.packed(ctx)
    cu = fa.cu_seqlens(ctx, fa.LENS)
    # cu_seqlens_q alone is 2-D (still contiguous, int32, 4 elements): only the shape check can fail
    ctx.expect_error(fa.fa2().flash_attn_varlen_func, q, k, v, cu.view(1, -1), cu, 128, 128)


def fix_1(ctx):
    q, k, v = fa.packed(ctx)
    cu_q, cu_k = fa.cu_seqlens(ctx, fa.LENS).view(1, -1), fa.cu_seqlens(ctx, fa.LENS)
    fa.varlen_matches(ctx, fa.fa2().flash_attn_varlen_func, q, k, v, cu_q.reshape(-1), cu_k.reshape(-1))


def control(ctx):
    q, k, v = fa.packed(ctx)
    cu = fa.cu_seqlens(ctx, fa.LENS)
    fa.varlen_matches(ctx, fa.fa2().flash_attn_varlen_func, q, k, v, cu, cu, causal=True)
