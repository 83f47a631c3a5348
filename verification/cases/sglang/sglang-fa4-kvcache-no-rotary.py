"""SGLang's FA4 flash_attn_with_kvcache has no rotary embedding: rotate q/k before the call."""

from verification.cases.sglang._sgl import kvcache_control, kvcache_inputs, wrapper

BACKEND = "sglang"
REQUIRES = {"packages": ["torch", "sglang.kernels.ops.attention.flash_attention_v4"]}
STEP_REQUIRES = {"control": {"cuda": True, "arch": "sm90+", "packages": ["sglang.kernels.ops.attention.flash_attn.cute"]}}
TIMEOUT = 600


def reproduce(ctx):
    t = ctx.torch
    q, kc, vc, lens = kvcache_inputs(ctx)
    cos = t.ones(256, 64, device=ctx.device, dtype=q.dtype)
    sin = t.zeros(256, 64, device=ctx.device, dtype=q.dtype)
    ctx.expect_error(wrapper().flash_attn_with_kvcache, q, kc, vc, rotary_cos=cos, rotary_sin=sin, cache_seqlens=lens)


def control(ctx):
    q, kc, vc, lens = kvcache_inputs(ctx)
    kvcache_control(ctx, q, kc, vc, lens)
