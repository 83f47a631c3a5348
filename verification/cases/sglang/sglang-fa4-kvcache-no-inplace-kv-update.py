"""SGLang's FA4 flash_attn_with_kvcache does not append new k/v to the cache."""

from verification.cases._common import randn
from verification.cases.sglang._sgl import kvcache_control, kvcache_inputs, wrapper

BACKEND = "sglang"
REQUIRES = {"packages": ["torch", "sglang.kernels.ops.attention.flash_attention_v4"]}
STEP_REQUIRES = {"control": {"cuda": True, "arch": "sm90+", "packages": ["sglang.kernels.ops.attention.flash_attn.cute"]}}
TIMEOUT = 600


def reproduce(ctx):
    q, kc, vc, lens = kvcache_inputs(ctx)
    k_new, v_new = randn(ctx, 2, 1, 2, 128), randn(ctx, 2, 1, 2, 128)
    ctx.expect_error(wrapper().flash_attn_with_kvcache, q, kc, vc, k=k_new, v=v_new, cache_seqlens=lens)


def control(ctx):
    # write the new token into the cache first, then attend (what SGLang's backends do)
    q, kc, vc, lens = kvcache_inputs(ctx)
    k_new, v_new = randn(ctx, 2, 1, 2, 128), randn(ctx, 2, 1, 2, 128)
    pos = lens.long() - 1
    kc[0, pos[0]] = k_new[0, 0]
    vc[0, pos[0]] = v_new[0, 0]
    kc[1, pos[1]] = k_new[1, 0]
    vc[1, pos[1]] = v_new[1, 0]
    kvcache_control(ctx, q, kc, vc, lens)
