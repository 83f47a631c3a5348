"""FA3 on Ampere/Ada GPUs only runs fp16/bf16: its fp8 kernels are built for sm90 alone."""

from importlib import import_module

fa = import_module("verification.cases.flash-attn._fa")

BACKEND = "flash-attn"
# the claim is about sm8x GPUs: every step is skipped on the H200
REQUIRES = {"cuda": True, "arch": "sm80-sm89", "packages": ["flash_attn_interface", "flash_attn_3"]}

# fix_2 (pick a serving backend with fp8 KV cache support on the GPU) is a configuration choice: no step.


def _quantised(ctx):
    q, k, v = fa.qkv(ctx)
    return [fa.to_fp8(ctx, x) for x in (q, k, v)]


def reproduce(ctx):
    (q8, _), (k8, _), (v8, _) = _quantised(ctx)
    ctx.expect_error(fa.fa3().flash_attn_func, q8, k8, v8, causal=True)


def fix_1(ctx):
    # dequantise to bf16 with the per-tensor scales, then a bf16 call
    t = ctx.torch
    (q_fp8, q_scale), (k_fp8, k_scale), (v_fp8, v_scale) = _quantised(ctx)
    q, k, v = (x.to(t.bfloat16) * s for x, s in ((q_fp8, q_scale), (k_fp8, k_scale), (v_fp8, v_scale)))
    fa.runs_and_matches(ctx, fa.fa3().flash_attn_func, q, k, v, causal=True, ref={"causal": True})


def control(ctx):
    fa.runs_and_matches(ctx, fa.fa3().flash_attn_func, *fa.qkv(ctx), causal=True, ref={"causal": True})
