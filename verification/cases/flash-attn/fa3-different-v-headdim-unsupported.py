"""FA3 takes a V head dim unlike Q/K's only for Q/K in (128, 192] with V in (96, 128], or Q/K <= 64 with V <= 512."""

from importlib import import_module

fa = import_module("verification.cases.flash-attn._fa")

BACKEND = "flash-attn"
REQUIRES = {"cuda": True, "arch": "sm90", "packages": ["flash_attn_interface", "flash_attn_3"]}


def reproduce(ctx):
    ctx.expect_error(fa.fa3().flash_attn_func, *fa.qkv(ctx, d=128, dv=64))


def _pad_qk(q, k, v, **kwargs):
    """The record's fix_2: zero-pad Q and K to 192, keeping the softmax scale of the real size."""
    import torch

    pad = lambda t: torch.nn.functional.pad(t, (0, 192 - t.shape[-1]))  # noqa: E731 - as in the record
    return fa.fa3().flash_attn_func(pad(q), pad(k), v, softmax_scale=q.shape[-1] ** -0.5, **kwargs)


def fix_1(ctx):
    fa.runs_and_matches(ctx, fa.padded_v(fa.fa3().flash_attn_func), *fa.qkv(ctx, d=128, dv=64), causal=True,
                        ref={"causal": True})


def fix_2(ctx):
    # Q/K 112 with V 128 is outside both ranges as it is; padded to 192/128 it is an allowed pair
    fa.runs_and_matches(ctx, _pad_qk, *fa.qkv(ctx, d=112, dv=128), causal=True, ref={"causal": True})


def control(ctx):
    # the DeepSeek prefill pair, Q/K 192 with V 128, runs as it is on Hopper
    fa.runs_and_matches(ctx, fa.fa3().flash_attn_func, *fa.qkv(ctx, d=192, dv=128), causal=True,
                        ref={"causal": True})
