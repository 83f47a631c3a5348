"""FA2 requires v shaped exactly like k, so a V head dim different from Q/K's is refused."""

from importlib import import_module

fa = import_module("verification.cases.flash-attn._fa")

BACKEND = "flash-attn"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flash_attn", "flash_attn_2_cuda"]}
STEP_REQUIRES = {"fix_2": {"cuda": True, "arch": "sm90", "packages": ["flash_attn_interface", "flash_attn_3"]}}

# Q/K 128 with V 64 rather than the record's DeepSeek 192/128: the same check refuses both, and the
# padded fix must run on a 128-wide FA2 kernel (the H200's reduced FA2 build has no other).


def reproduce(ctx):
    ctx.expect_error(fa.fa2().flash_attn_func, *fa.qkv(ctx, dv=64), causal=True)


def fix_1(ctx):
    fa.runs_and_matches(ctx, fa.padded_v(fa.fa2().flash_attn_func), *fa.qkv(ctx, dv=64), causal=True,
                        ref={"causal": True})


def fix_2(ctx):
    # FA3 on Hopper takes Q/K 192 with V 128 as they are
    fa.runs_and_matches(ctx, fa.fa3().flash_attn_func, *fa.qkv(ctx, d=192, dv=128), causal=True,
                        ref={"causal": True})


def control(ctx):
    fa.runs_and_matches(ctx, fa.fa2().flash_attn_func, *fa.qkv(ctx), causal=True, ref={"causal": True})
