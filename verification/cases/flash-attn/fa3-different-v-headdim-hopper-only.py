"""FA3 runs a V head dim different from Q/K's (e.g. 192/128) only on Hopper (compute capability 9.x)."""

from importlib import import_module

fa = import_module("verification.cases.flash-attn._fa")

BACKEND = "flash-attn"
# the refusal is on non-Hopper GPUs: on the H200 only fix_2 (the same call on Hopper) runs
REQUIRES = {"cuda": True, "arch": "sm80-sm89", "packages": ["flash_attn_interface", "flash_attn_3"]}
STEP_REQUIRES = {"fix_2": {"cuda": True, "arch": "sm90"}}


def reproduce(ctx):
    ctx.expect_error(fa.fa3().flash_attn_func, *fa.qkv(ctx, d=192, dv=128))


def fix_1(ctx):
    fa.runs_and_matches(ctx, fa.padded_v(fa.fa3().flash_attn_func), *fa.qkv(ctx, d=192, dv=128))


def fix_2(ctx):
    fa.runs_and_matches(ctx, fa.fa3().flash_attn_func, *fa.qkv(ctx, d=192, dv=128))


def control(ctx):
    fa.runs_and_matches(ctx, fa.fa3().flash_attn_func, *fa.qkv(ctx))
