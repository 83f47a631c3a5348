"""sgl-kernel 0.3.21's flash_attn_with_kvcache(ver=4) refuses FP8 descale tensors: its bundled FA4 interface takes none."""

import importlib

from verification.cases._common import TOL, first, randn, ref_attention
from verification.cases.sglang._sglk import flash_attn_module, kernel_package

# Runs in call 3's SGLang process, with the kernel wheels' Python files and (from call 2) the
# CuTe DSL that 0.3.21's bundled FA4 interface imports.
BACKEND = "sglang-server"
REQUIRES = {"packages": ["torch"]}
# fix 2 runs the bundled FA4 for real (bf16, no descale)
STEP_REQUIRES = {"fix_2": {"cuda": True, "arch": "sm90+", "packages": ["cutlass"]}}
WHEEL = "sgl-kernel 0.3.21"


def _wrapper(ctx):
    """sgl-kernel 0.3.21's flash_attn module (inside kernel_package), with flash_ops (its compiled
    FA3, not used by the ver=4 branch) stood in for. Skips when the FA4 interface did not import:
    then the branch stops at its 'FA4 is not available' assertion, before the descale check."""
    fa = flash_attn_module(ctx, WHEEL)
    if fa.flash_attn_varlen_func_v4 is None:
        try:
            importlib.import_module("sgl_kernel._fa4_interface")
        except Exception as exc:  # noqa: BLE001 - the reason for the skip
            ctx.skip(f"{WHEEL}'s FA4 interface does not import here ({type(exc).__name__}: {str(exc)[:200]}), "
                     "so ver=4 stops before the descale check")
    return fa


def _kvcache(ctx, b=2, cache_len=128, h=4, d=128):
    t = ctx.torch
    q = randn(ctx, b, 1, h, d)
    k_cache, v_cache = randn(ctx, b, cache_len, h, d), randn(ctx, b, cache_len, h, d)
    seqlens = t.full((b,), cache_len, dtype=t.int32, device=ctx.device)
    return q, k_cache, v_cache, seqlens


def reproduce(ctx):
    # An FP8 KV cache's scales handed to the FA4 branch (the check comes before any kernel).
    t = ctx.torch
    with kernel_package(ctx, WHEEL, standin=("flash_ops",)):
        fa = _wrapper(ctx)
        q, k_cache, v_cache, seqlens = _kvcache(ctx)
        scale = t.ones(2, 4, dtype=t.float32, device=ctx.device)  # (batch, kv heads)
        ctx.expect_error(fa.flash_attn_with_kvcache, q, k_cache, v_cache, cache_seqlens=seqlens,
                         k_descale=scale, v_descale=scale, ver=4)
        ctx.expect_error(fa.flash_attn_with_kvcache, q, k_cache, v_cache, cache_seqlens=seqlens,
                         q_descale=scale, ver=4)


def fix_2(ctx):
    # "Drop FP8 for the FA4 call": bf16 cache, no descale. The same wrapper runs its bundled FA4 and
    # matches the reference.
    with kernel_package(ctx, WHEEL, standin=("flash_ops",)):
        fa = _wrapper(ctx)
        q, k_cache, v_cache, seqlens = _kvcache(ctx)
        out = first(ctx.call(fa.flash_attn_with_kvcache, q, k_cache, v_cache, cache_seqlens=seqlens, ver=4))
    ctx.close(out, ref_attention(q, k_cache, v_cache), **TOL)
