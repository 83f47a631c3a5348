"""SGLang's FlashAttention backend cannot build tree-draft (topk > 1) verify metadata for sliding-window layers with page size > 1."""

from errkb.verify.case import Refuted
from verification.cases.sglang._server import FA_BACKEND, fa_backend, sglang_module

BACKEND = "sglang-server"
# the FA backend itself is imported by the helpers, with sgl_kernel stood in where it does not load
REQUIRES = {"packages": ["sglang.srt.server_args"]}
# The page-size-1 builder runs a Triton kernel.
STEP_REQUIRES = {"fix_1": {"cuda": True}}
DRAFT = 2  # --speculative-num-draft-tokens


def _metadata(ctx):
    """Target-verify metadata for 2 requests (3 and 5 cached tokens) with DRAFT draft tokens each:
    the prefix page table, and the per-branch draft tokens (1 or 2 visible to each draft row)."""
    t = ctx.torch
    fa = sglang_module(ctx, FA_BACKEND)
    dev, i32 = ctx.device, t.int32
    prefix = fa.FlashAttentionMetadata()
    prefix.cache_seqlens_int32 = t.tensor([3, 5], dtype=i32, device=dev)
    prefix.page_table = t.tensor([[10, 11, 12, 0, 0], [20, 21, 22, 23, 24]], dtype=i32, device=dev)
    prefix.max_seq_len_k = 5
    drafts = fa.FlashAttentionMetadata()
    drafts.cache_seqlens_int32 = t.tensor([1, 2, 1, 2], dtype=i32, device=dev)
    drafts.page_table = t.tensor([[30, 0], [30, 31], [40, 0], [40, 41]], dtype=i32, device=dev)
    drafts.cu_seqlens_q = t.arange(5, dtype=i32, device=dev)
    return prefix, drafts


def reproduce(ctx):
    # The builder the backend calls for SWA models when topk > 1 during target verify.
    backend = fa_backend(ctx, 3, page_size=16, speculative_num_draft_tokens=DRAFT, use_sliding_window_kv_pool=False)
    ctx.expect_error(backend._init_sliding_window_attn_spec_metadata, *_metadata(ctx))


def fix_1(ctx):
    # --page-size 1: the same builder stitches each draft row's page table (its request's prefix,
    # then its own draft tokens).
    backend = fa_backend(ctx, 3, page_size=1, speculative_num_draft_tokens=DRAFT, use_sliding_window_kv_pool=False)
    prefix, drafts = _metadata(ctx)
    ctx.call(backend._init_sliding_window_attn_spec_metadata, prefix, drafts)
    swa = prefix.swa_spec_metadata
    want = [[10, 11, 12, 30, 0, 0, 0], [10, 11, 12, 30, 31, 0, 0],
            [20, 21, 22, 23, 24, 40, 0], [20, 21, 22, 23, 24, 40, 41]]
    got = swa.page_table.tolist() if swa is not None else None
    if got != want or swa.cache_seqlens_int32.tolist() != [4, 5, 6, 7]:
        raise Refuted(f"stitched page table {got}")
