"""FA2 (CUDA build) only pages its KV cache in blocks of a multiple of 256 tokens."""

from importlib import import_module

fa = import_module("verification.cases.flash-attn._fa")

BACKEND = "flash-attn"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flash_attn", "flash_attn_2_cuda"]}
STEP_REQUIRES = {"fix_2": {"cuda": True, "arch": "sm90", "packages": ["flash_attn_interface", "flash_attn_3"]}}


def _decode(ctx, fn, page, table_arg="block_table"):
    """One decode token per sequence over a shuffled page pool of `page`-token pages: (out, reference)."""
    q, k_pages, v_pages, table, lens, ks, vs = fa.paged_kv(ctx, page=page)
    return fn(q, k_pages, v_pages, cache_seqlens=lens, **{table_arg: table}), fa.kv_ref(q, ks, vs)


def reproduce(ctx):
    ctx.expect_error(_decode, ctx, fa.fa2().flash_attn_with_kvcache, 16)


def fix_1(ctx):
    out, ref = ctx.call(_decode, ctx, fa.fa2().flash_attn_with_kvcache, 256)
    ctx.close(out, ref, **fa.TOL)


def fix_2(ctx):
    # FA3's paged path with 16-token pages; a FA3 binary built without paged KV skips this step
    out, ref = fa.build_call(ctx, _decode, ctx, fa.fa3().flash_attn_with_kvcache, 16, table_arg="page_table")
    ctx.close(fa.first(out), ref, **fa.TOL)


def control(ctx):
    out, ref = ctx.call(_decode, ctx, fa.fa2().flash_attn_with_kvcache, 512)
    ctx.close(out, ref, **fa.TOL)
