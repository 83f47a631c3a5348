"""A caller-supplied FA3 output must have the input dtype for fp16/bf16 inputs and be bf16 for fp8 inputs."""

from importlib import import_module

fa = import_module("verification.cases.flash-attn._fa")

BACKEND = "flash-attn"
REQUIRES = {"cuda": True, "arch": "sm90", "packages": ["flash_attn_interface", "flash_attn_3"]}

# The public wrappers allocate the output themselves; `out=` is passed to the compiled operator
# torch.ops.flash_attn_3.fwd, as SGLang's FA3 wrappers do. fp8 results are compared within the fp8
# tolerance (see _fa.FP8_TOL).


def _fp8(ctx):
    q, k, v = fa.qkv(ctx, hk=2)
    return tuple(fa.to_fp8(ctx, x, per_tensor=False)[0] for x in (q, k, v))


def _ref(q8, k8, v8):
    return fa.ref_attention(q8.float(), k8.float(), v8.float())


def reproduce(ctx):
    t = ctx.torch
    q8, k8, v8 = _fp8(ctx)
    out = t.empty(q8.shape, dtype=q8.dtype, device=q8.device)  # an fp8 buffer
    ctx.expect_error(fa.fa3_op().fwd, q8, k8, v8, out=out)


def fix_1(ctx):
    t = ctx.torch
    q8, k8, v8 = _fp8(ctx)
    out_dtype = t.bfloat16 if q8.dtype == t.float8_e4m3fn else q8.dtype
    out = t.empty(q8.shape[:-1] + (v8.shape[-1],), dtype=out_dtype, device=q8.device)
    ctx.call(fa.fa3_op().fwd, q8, k8, v8, out=out)
    ctx.close(out, _ref(q8, k8, v8), what="the preallocated output", **fa.FP8_TOL)


def fix_2(ctx):
    q8, k8, v8 = _fp8(ctx)
    out = fa.first(ctx.call(fa.fa3().flash_attn_func, q8, k8, v8))
    assert out.dtype == ctx.torch.bfloat16, out.dtype
    ctx.close(out, _ref(q8, k8, v8), **fa.FP8_TOL)


def control(ctx):
    # bf16 inputs with a bf16 buffer
    q, k, v = fa.qkv(ctx, hk=2)
    out = ctx.torch.empty_like(q)
    ctx.call(fa.fa3_op().fwd, q, k, v, out=out, is_causal=True)
    fa.matches(ctx, out, q, k, v, causal=True)
