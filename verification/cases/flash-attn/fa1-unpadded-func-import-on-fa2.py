"""Code written for FlashAttention 1.x imports flash_attn_unpadded_*func from flash-attn 2.x:
"cannot import name 'flash_attn_unpadded_qkvpacked_func'" (2.0 renamed them flash_attn_varlen_*).

Imports and Python's argument binding only, on a CPU: flash-attn's own Python files (git tags
v2.8.3 and v1.0.9) with the compiled module stood in (verification/cases/flash-attn/_fa_py.py).
Fix 1 (the 2.x name) must import and accept the fix's call `(qkv, cu_seqlens, max_s, 0.0,
causal=True)`; running it needs a GPU. Fix 2 (pin 1.0.9) must give the old name there."""

import inspect
from importlib import import_module

fa = import_module("verification.cases.flash-attn._fa_py")

BACKEND = "fa2"
REQUIRES = {"packages": ["torch"]}
TIMEOUT = 180


def reproduce(ctx):
    fa.needs(ctx, low="2.0.0", why="the unpadded names exist up to 1.x")
    fa.interface(ctx)

    def old_import():
        from flash_attn.flash_attn_interface import flash_attn_unpadded_qkvpacked_func

        return flash_attn_unpadded_qkvpacked_func

    ctx.expect_error(old_import)


def fix_1(ctx):
    fa.needs(ctx, low="2.0.0", why="the fix is the 2.x name")
    fa.interface(ctx)
    t = ctx.torch

    def new_import():
        from flash_attn import flash_attn_varlen_qkvpacked_func

        return flash_attn_varlen_qkvpacked_func

    fn = ctx.call(new_import)
    qkv = t.randn(10, 3, 2, 64, dtype=t.float16)
    cu_seqlens = t.tensor([0, 4, 10], dtype=t.int32)
    ctx.call(lambda: inspect.signature(fn).bind(qkv, cu_seqlens, 6, 0.0, causal=True))
    ctx.note("flash_attn_varlen_qkvpacked_func imported and takes the fix's arguments; running it needs a GPU")


def fix_2(ctx):
    fa.needs(ctx, below="2.0.0", why="the fix pins FlashAttention 1.x")
    fa.interface(ctx)

    def old_import():
        from flash_attn.flash_attn_interface import flash_attn_unpadded_qkvpacked_func

        return flash_attn_unpadded_qkvpacked_func

    ctx.note(f"imported {ctx.call(old_import).__name__}")
