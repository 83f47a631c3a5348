"""FA2's flash_attn_with_kvcache refuses cache_batch_idx together with a paged cache (block_table)."""

from importlib import import_module

fa = import_module("verification.cases.flash-attn._fa")

BACKEND = "flash-attn"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flash_attn", "flash_attn_2_cuda"]}

SLOT_LENS = (77, 140, 300)  # three cache slots, one block-table row each
SLOTS = (2, 0)  # query row i reads slot SLOTS[i]


def _inputs(ctx):
    t = ctx.torch
    _, k_pages, v_pages, bt_by_slot, slot_lens, ks, vs = fa.paged_kv(ctx, lens=SLOT_LENS, page=256)
    slots = t.tensor(SLOTS, dtype=t.int32, device=ctx.device)
    q = fa.randn(ctx, len(SLOTS), 1, 4, 128)
    lens = slot_lens[slots.long()]  # cache_seqlens is given per query row
    ref = fa.kv_ref(q, [ks[s] for s in SLOTS], [vs[s] for s in SLOTS])
    return q, k_pages, v_pages, bt_by_slot, slots, lens, ref


def reproduce(ctx):
    q, k_pages, v_pages, bt_by_slot, slots, lens, _ = _inputs(ctx)
    ctx.expect_error(fa.fa2().flash_attn_with_kvcache, q, k_pages, v_pages, cache_seqlens=lens, block_table=bt_by_slot,
                     cache_batch_idx=slots)


def fix_1(ctx):
    q, k_pages, v_pages, bt_by_slot, slots, lens, ref = _inputs(ctx)
    out = ctx.call(fa.fa2().flash_attn_with_kvcache, q, k_pages, v_pages, cache_seqlens=lens,
                   block_table=bt_by_slot[slots])  # int32 indices, as in the record
    ctx.close(out, ref, **fa.TOL)


def control(ctx):
    # cache_batch_idx is fine on a dense cache: query row i reads cache row SLOTS[i]
    t = ctx.torch
    q, k_cache, v_cache, lens = fa.dense_kv(ctx, lens=SLOT_LENS, cache_len=384)
    slots = t.tensor(SLOTS, dtype=t.int32, device=ctx.device)
    q, rows = q[: len(SLOTS)], slots.long()
    out = ctx.call(fa.fa2().flash_attn_with_kvcache, q, k_cache, v_cache, cache_seqlens=lens[rows],
                   cache_batch_idx=slots)
    ctx.close(out, fa.dense_ref(q, k_cache[rows], v_cache[rows], lens[rows]), **fa.TOL)
