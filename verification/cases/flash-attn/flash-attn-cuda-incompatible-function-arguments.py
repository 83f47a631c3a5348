"""flash-attn's compiled fwd_kvcache called with another release's argument list: pybind11 refuses the
call with "fwd_kvcache(): incompatible function arguments". flash-attn 2.8.3 (the reduced sm90 build)
takes 20 arguments; a caller written for 2.5.x passes 18 (no cache_leftpad, no softcap), as
flash_attn_interface.py at v2.5.9.post1 does. The record's second fix is the same call with 2.8.3's
list (leftpad None after cache_batch_idx, softcap 0.0 after the window); the control is the public
flash_attn_with_kvcache wrapper of the installed release. Dense cache, bf16, head dim 128."""

from importlib import import_module

fa = import_module("verification.cases.flash-attn._fa")

BACKEND = "flash-attn"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flash_attn", "flash_attn_2_cuda"]}


def _kvcache(ctx):
    q, k_cache, v_cache, lens = fa.dense_kv(ctx)
    return q, k_cache, v_cache, lens, q.shape[-1] ** -0.5


def _call_2_5(q, k_cache, v_cache, lens, scale):
    """The argument list flash_attn_interface.py passes at v2.5.9.post1 (18 values)."""
    return fa.fa2_raw().fwd_kvcache(q, k_cache, v_cache, None, None, lens, None, None, None, None, None, None,
                                    scale, True, -1, -1, False, 0)


def _call_2_8(q, k_cache, v_cache, lens, scale):
    """The record's second fix: 2.6.1+'s list, leftpad None and softcap 0.0 in their places (20 values)."""
    out, _ = fa.fa2_raw().fwd_kvcache(q, k_cache, v_cache, None, None, lens, None, None, None, None, None, None,
                                      None, scale, True, -1, -1, 0.0, False, 0)
    return out


def reproduce(ctx):
    ctx.expect_error(_call_2_5, *_kvcache(ctx))


def fix_1(ctx):
    ctx.skip("installing the release the caller was written for (e.g. 2.5.9.post1) is a package change; "
             "its argument list is the one reproduce passes")


def fix_2(ctx):
    q, k_cache, v_cache, lens, scale = _kvcache(ctx)
    out = ctx.call(_call_2_8, q, k_cache, v_cache, lens, scale)
    ctx.close(out, fa.dense_ref(q, k_cache, v_cache, lens), **fa.TOL)


def fix_3(ctx):
    ctx.skip("removing a stale build needs two installs side by side; not set up here")


def control(ctx):
    q, k_cache, v_cache, lens, _ = _kvcache(ctx)
    out = ctx.call(fa.fa2().flash_attn_with_kvcache, q, k_cache, v_cache, cache_seqlens=lens, causal=True)
    ctx.close(out, fa.dense_ref(q, k_cache, v_cache, lens), **fa.TOL)
