"""`import flash_attn_interface` where FlashAttention-3 (hopper/) was not installed:
'No module named 'flash_attn_interface''.

Reproduce: a new environment (CPython 3.11, pip 26.3, nothing else), `python -c "import flash_attn_interface"`.
Both fixes need a GPU: fix 1 compiles hopper/ for sm90, fix 2 runs FlashAttention 2 or SDPA on CUDA."""

from verification.cases import _builds as b

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 600


def reproduce(ctx):
    b.fresh_import_refused(ctx, "from flash_attn_interface import flash_attn_func")


def fix_1(ctx):
    ctx.skip("compiles FlashAttention-3's hopper/ extension (CUDA, sm90): not on this machine")


def fix_2(ctx):
    ctx.skip("loads a model with FlashAttention 2 or SDPA on a GPU")
