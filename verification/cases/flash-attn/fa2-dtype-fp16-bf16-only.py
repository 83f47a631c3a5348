"""FA2 only takes fp16/bf16 inputs (fp32 is refused); FA3's backward likewise has no fp8 kernels."""

from importlib import import_module

fa = import_module("verification.cases.flash-attn._fa")

BACKEND = "flash-attn"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flash_attn", "flash_attn_2_cuda"]}
STEP_REQUIRES = {"fix_3": {"cuda": True, "arch": "sm90", "packages": ["flash_attn_interface", "flash_attn_3"]}}

# fix_1 (load the model with torch_dtype=torch.bfloat16) is a Hugging Face loading option: it needs
# transformers and a checkpoint, so it has no step; fix_2 is the same cast done at the call.


def reproduce(ctx):
    q, k, v = fa.qkv(ctx, dtype=ctx.torch.float32)
    ctx.expect_error(fa.fa2().flash_attn_func, q, k, v, causal=True)


def _cast_around(q, k, v, **kwargs):
    """The record's fix_2: one half dtype into FA2, the caller's dtype out."""
    import torch

    orig = q.dtype
    q, k, v = (x.to(torch.bfloat16) for x in (q, k, v))
    return fa.fa2().flash_attn_func(q, k, v, **kwargs).to(orig)


def fix_2(ctx):
    q, k, v = fa.qkv(ctx, dtype=ctx.torch.float32)
    # bf16 rounding of the fp32 inputs is part of the fix: a looser bound than bf16-in
    fa.runs_and_matches(ctx, _cast_around, q, k, v, causal=True, tol={"atol": 3e-2, "rtol": 3e-2},
                        ref={"causal": True})


def fix_3(ctx):
    # FA3's fp8 forward under no_grad (the backward it cannot do is never built); fp8 tolerance
    t = ctx.torch
    q, k, v = fa.qkv(ctx)
    q8, k8, v8 = (fa.to_fp8(ctx, x, per_tensor=False)[0] for x in (q, k, v))
    with t.no_grad():
        out = fa.first(ctx.call(fa.fa3().flash_attn_func, q8, k8, v8, causal=True))
    fa.matches(ctx, out, q8.float(), k8.float(), v8.float(), tol=fa.FP8_TOL, causal=True)


def control(ctx):
    q, k, v = fa.qkv(ctx)
    fa.runs_and_matches(ctx, fa.fa2().flash_attn_func, q, k, v, causal=True, ref={"causal": True})
