"""FA2 refuses left padding (cache_leftpad) together with a paged KV cache (block_table)."""

from importlib import import_module

fa = import_module("verification.cases.flash-attn._fa")

BACKEND = "flash-attn"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flash_attn", "flash_attn_2_cuda"]}
STEP_REQUIRES = {"fix_2": {"cuda": True, "arch": "sm90", "packages": ["flash_attn_interface", "flash_attn_3"]}}

PAD = (20, 5)  # unused leading positions of each sequence


def _inputs(ctx):
    # 256-token pages, so that FA2's page-size check passes and only the leftpad one can fail
    q, k_pages, v_pages, table, lens, ks, vs = fa.paged_kv(ctx, page=256)
    pad = ctx.torch.tensor(PAD, dtype=ctx.torch.int32, device=ctx.device)
    return q, k_pages, v_pages, table, lens, pad, ks, vs


def reproduce(ctx):
    q, k_pages, v_pages, table, lens, pad, _, _ = _inputs(ctx)
    ctx.expect_error(fa.fa2().flash_attn_with_kvcache, q, k_pages, v_pages, cache_seqlens=lens, cache_leftpad=pad,
                     block_table=table)


def fix_1(ctx):
    # the pages hold each sequence from its first position: no left padding to describe
    q, k_pages, v_pages, table, lens, _, ks, vs = _inputs(ctx)
    out = ctx.call(fa.fa2().flash_attn_with_kvcache, q, k_pages, v_pages, cache_seqlens=lens, block_table=table)
    ctx.close(out, fa.kv_ref(q, ks, vs), **fa.TOL)


def fix_2(ctx):
    # FA3 reads positions [leftpad, cache_seqlens) of each paged sequence; a FA3 binary built
    # without paged KV skips this step
    q, k_pages, v_pages, table, lens, pad, ks, vs = _inputs(ctx)
    out = fa.build_call(ctx, fa.fa3().flash_attn_with_kvcache, q, k_pages, v_pages, cache_seqlens=lens,
                      cache_leftpad=pad, page_table=table)
    ref = fa.kv_ref(q, [k[p:] for k, p in zip(ks, PAD)], [v[p:] for v, p in zip(vs, PAD)])
    ctx.close(fa.first(out), ref, **fa.TOL)


def control(ctx):
    # left padding on a dense cache is what FA2 supports
    t = ctx.torch
    q, k_cache, v_cache, lens = fa.dense_kv(ctx)
    pad = t.tensor(PAD, dtype=t.int32, device=ctx.device)
    out = ctx.call(fa.fa2().flash_attn_with_kvcache, q, k_cache, v_cache, cache_seqlens=lens, cache_leftpad=pad)
    n = lens.tolist()
    ref = fa.kv_ref(q, [k_cache[i, PAD[i]:n[i]] for i in range(2)], [v_cache[i, PAD[i]:n[i]] for i in range(2)])
    ctx.close(out, ref, **fa.TOL)
