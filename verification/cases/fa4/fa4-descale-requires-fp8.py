"""q/k/v_descale are for FP8 inputs only; with bf16 inputs pass none."""

from verification.cases._common import TOL, fa4, first, qkv, ref_attention

REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flash_attn.cute"]}
TIMEOUT = 600


def reproduce(ctx):
    t = ctx.torch
    q, k, v = qkv(ctx)
    scale = t.ones(2, 4, device=ctx.device, dtype=t.float32)
    ctx.expect_error(fa4()._flash_attn_fwd, q, k, v, k_descale=scale, v_descale=scale)


def fix_1(ctx):
    t = ctx.torch
    q, k, v = qkv(ctx)
    scale = t.ones(2, 4, device=ctx.device, dtype=t.float32)
    scaled = v.element_size() == 1
    out = first(ctx.call(fa4()._flash_attn_fwd, q, k, v, k_descale=scale if scaled else None,
                         v_descale=scale if scaled else None))
    ctx.close(out, ref_attention(q, k, v), **TOL)


def control(ctx):
    q, k, v = qkv(ctx)
    out = first(ctx.call(fa4()._flash_attn_fwd, q, k, v))
    ctx.close(out, ref_attention(q, k, v), **TOL)
