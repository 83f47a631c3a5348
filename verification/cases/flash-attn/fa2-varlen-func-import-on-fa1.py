"""Code written for FlashAttention-2 imports flash_attn_varlen_*func from flash-attn 1.x:
"cannot import name 'flash_attn_varlen_func'" (1.x calls them flash_attn_unpadded_*, and its
flash_attn/__init__.py exports no functions).

Imports only, on a CPU: flash-attn's own Python files (git tags v1.0.9 and v2.8.3) with the
compiled module stood in (verification/cases/flash-attn/_fa_py.py). Fix 1 (2.x) must give the
name; fix 2 (the try/except in one's own code) must give a function on both."""

from importlib import import_module

fa = import_module("verification.cases.flash-attn._fa_py")

BACKEND = "fa2"
REQUIRES = {"packages": ["torch"]}
TIMEOUT = 180


def _new_import():
    from flash_attn import flash_attn_varlen_func

    return flash_attn_varlen_func


def reproduce(ctx):
    fa.needs(ctx, below="2.0.0", why="the varlen names exist from 2.0.0")
    fa.interface(ctx)
    ctx.expect_error(_new_import)


def fix_1(ctx):
    fa.needs(ctx, low="2.0.0", why="the fix is the upgrade to 2.x")
    fa.interface(ctx)
    ctx.note(f"imported {ctx.call(_new_import).__name__}")


def fix_2(ctx):
    fa.interface(ctx)

    def both_generations():
        try:
            from flash_attn.flash_attn_interface import flash_attn_varlen_func as varlen_attn
        except ImportError:  # flash-attn < 2
            from flash_attn.flash_attn_interface import flash_attn_unpadded_func as varlen_attn
        return varlen_attn

    ctx.note(f"varlen_attn = {ctx.call(both_generations).__name__}")
