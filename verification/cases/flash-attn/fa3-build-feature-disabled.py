"""A FlashAttention binary compiled with a feature disabled refuses calls that need it (here: paged KV)."""

from importlib import import_module

fa = import_module("verification.cases.flash-attn._fa")

BACKEND = "flash-attn"
REQUIRES = {"cuda": True, "arch": "sm90", "packages": ["flash_attn_interface", "flash_attn_3"]}

# The message depends on how FA3 was compiled, not on the inputs: the H200's reduced FA3 build is
# made with FLASH_ATTENTION_DISABLE_PAGEDKV (and SPLIT, SOFTCAP, PACKGQA, FP16, APPENDKV, ...), so
# a paged call that takes the non-TMA paged path (16-token pages, one query token) raises there.
# A binary with paged KV compiled in answers the same call, and the reproduce step is then skipped.
# fix_1 (rebuild without the FLASH_ATTENTION_DISABLE_* variable) happens at build time: no step.

PAGE = 16


def _paged_decode(ctx):
    q, k_pages, v_pages, table, lens, ks, vs = fa.paged_kv(ctx, page=PAGE)
    return q, k_pages, v_pages, table, lens, fa.kv_ref(q, ks, vs)


def reproduce(ctx):
    from errkb.verify.case import Refuted

    q, k_pages, v_pages, table, lens, _ = _paged_decode(ctx)
    try:
        ctx.expect_error(fa.fa3().flash_attn_with_kvcache, q, k_pages, v_pages, cache_seqlens=lens, page_table=table)
    except Refuted:
        if ctx.observed == {"class": None, "message": None}:
            ctx.skip("this FA3 binary has paged KV compiled in, so the call ran (the message needs a build "
                     "made with FLASH_ATTENTION_DISABLE_PAGEDKV)")
        raise


def fix_2(ctx):
    # avoid the feature: the same sequences gathered into a dense cache
    q, k_pages, v_pages, table, lens, ref = _paged_decode(ctx)
    k_cache, v_cache = (x[table.long()].flatten(1, 2) for x in (k_pages, v_pages))
    out = ctx.call(fa.fa3().flash_attn_with_kvcache, q, k_cache, v_cache, cache_seqlens=lens)
    ctx.close(fa.first(out), ref, **fa.TOL)


def control(ctx):
    # a feature the reduced build keeps: a causal varlen forward
    q, k, v = fa.packed(ctx, hk=2)
    cu = fa.cu_seqlens(ctx, fa.LENS)
    fa.varlen_matches(ctx, fa.fa3().flash_attn_varlen_func, q, k, v, cu, cu, causal=True)
