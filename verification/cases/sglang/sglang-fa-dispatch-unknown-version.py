"""SGLang's FlashAttention dispatcher only knows ver=3 and ver=4 (ints); anything else is an unknown version."""

from verification.cases._common import TOL, first
from verification.cases.sglang._sgl import kvcache_inputs, kvcache_ref

BACKEND = "sglang-server"
REQUIRES = {"packages": ["sglang.kernels.ops.attention.flash_attention"]}
STEP_REQUIRES = {"fix_1": {"cuda": True, "arch": "sm90+", "packages": ["sglang.kernels.ops.attention.flash_attn.cute"]}}
TIMEOUT = 600


def reproduce(ctx):
    from sglang.kernels.ops.attention.flash_attention import flash_attn_varlen_func, flash_attn_with_kvcache

    q, k_cache, v_cache, seqlens = kvcache_inputs(ctx)
    ctx.expect_error(flash_attn_with_kvcache, q, k_cache, v_cache, cache_seqlens=seqlens, ver=2)
    # A version read from text: "4" is not 4, and the message then reads 'version 4'.
    exc = ctx.expect_error(flash_attn_with_kvcache, q, k_cache, v_cache, cache_seqlens=seqlens, ver="4")
    ctx.note(f"ver='4' -> {exc}")
    ctx.expect_error(flash_attn_varlen_func, q[:, 0], k_cache[0], v_cache[0], None, None, ver=2)


def fix_1(ctx):
    # Pass the int: the call goes to SGLang's vendored FA4 and matches the reference.
    from sglang.kernels.ops.attention.flash_attention import flash_attn_with_kvcache

    q, k_cache, v_cache, seqlens = kvcache_inputs(ctx)
    out = first(ctx.call(flash_attn_with_kvcache, q, k_cache, v_cache, cache_seqlens=seqlens, num_splits=1,
                         ver=int("4")))
    ctx.close(out, kvcache_ref(q, k_cache, v_cache, seqlens), **TOL)
