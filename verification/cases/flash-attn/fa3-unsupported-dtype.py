"""FA3's forward only has fp16, bf16 and fp8 e4m3 kernels; float32 and fp8 e5m2 inputs are refused."""

from importlib import import_module

fa = import_module("verification.cases.flash-attn._fa")

BACKEND = "flash-attn"
REQUIRES = {"cuda": True, "arch": "sm90", "packages": ["flash_attn_interface", "flash_attn_3"]}

# fix_2 (SGLang's --kv-cache-dtype fp8_e4m3 with --attention-backend fa3) is a server launch
# option: no step here. bf16 is the 16-bit dtype used: the H200's reduced FA3 build has no fp16.


def reproduce(ctx):
    t = ctx.torch
    q, k, v = fa.qkv(ctx)
    ctx.expect_error(fa.fa3().flash_attn_func, *(x.to(t.float8_e5m2) for x in (q, k, v)))


def fix_1(ctx):
    t = ctx.torch
    q, k, v = fa.qkv(ctx)
    fa.runs_and_matches(ctx, fa.fa3().flash_attn_func, *(x.to(t.bfloat16) for x in (q, k, v)), causal=True,
                        ref={"causal": True})


def control(ctx):
    # the fp8 format FA3 has kernels for; fp8 tolerance (see _fa.FP8_TOL)
    q8, k8, v8 = (fa.to_fp8(ctx, x, per_tensor=False)[0] for x in fa.qkv(ctx))
    out = ctx.call(fa.fa3().flash_attn_func, q8, k8, v8)
    fa.matches(ctx, out, q8.float(), k8.float(), v8.float(), tol=fa.FP8_TOL)
