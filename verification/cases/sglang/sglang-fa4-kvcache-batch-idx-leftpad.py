"""SGLang's FA4 flash_attn_with_kvcache refuses cache_batch_idx and cache_leftpad."""

from verification.cases.sglang._sgl import kvcache_control, kvcache_inputs, wrapper

BACKEND = "sglang"
# the refusal is plain Python before any kernel: it runs wherever the wrapper imports
REQUIRES = {"packages": ["torch", "sglang.kernels.ops.attention.flash_attention_v4"]}
STEP_REQUIRES = {"control": {"cuda": True, "arch": "sm90+", "packages": ["sglang.kernels.ops.attention.flash_attn.cute"]}}
TIMEOUT = 600


def reproduce(ctx):
    t = ctx.torch
    q, kc, vc, lens = kvcache_inputs(ctx)
    idx = t.tensor([1, 0], dtype=t.int32, device=ctx.device)
    ctx.expect_error(wrapper().flash_attn_with_kvcache, q, kc, vc, cache_seqlens=lens, cache_batch_idx=idx)
    ctx.note("cache_batch_idx raised as recorded; now cache_leftpad")
    ctx.expect_error(wrapper().flash_attn_with_kvcache, q, kc, vc, cache_seqlens=lens,
                     cache_leftpad=t.zeros(2, dtype=t.int32, device=ctx.device))


def control(ctx):
    q, kc, vc, lens = kvcache_inputs(ctx)
    kvcache_control(ctx, q, kc, vc, lens)
