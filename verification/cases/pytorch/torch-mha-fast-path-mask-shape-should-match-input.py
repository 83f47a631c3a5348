"""nn.MultiheadAttention in inference on CUDA with a boolean (batch, L, S) attn_mask: the fused
fast path (torch._native_multi_head_attention) reshapes it to (batch, 1, L, S) and its CUDA masked
softmax refuses it (head dim 10: a multiple of 8 is first offered to
scaled_dot_product_attention, which may take the mask). Fix 1: the documented (batch*num_heads, L, S) mask, whose output must equal
the same module's Python path (training-mode forward with dropout 0) on the same mask."""

BACKEND = "sdpa"
REQUIRES = {"cuda": True, "packages": ["torch"]}
TIMEOUT = 300
B, L, E, H = 2, 16, 60, 6  # head dim 10: not a multiple of 8, so the native path computes the scores itself


def _module_and_input(ctx):
    t = ctx.torch
    t.manual_seed(0)
    mha = t.nn.MultiheadAttention(E, H, batch_first=True).to(ctx.device).eval()
    x = t.randn(B, L, E, device=ctx.device)
    mask = t.rand(B, L, L, device=ctx.device) > 0.7  # True = not allowed to attend
    mask[:, :, 0] = False  # every query keeps one key
    return mha, x, mask


def reproduce(ctx):
    t = ctx.torch
    mha, x, mask = _module_and_input(ctx)
    with t.inference_mode():
        ctx.expect_error(mha, x, x, x, attn_mask=mask, need_weights=False)


def fix_1(ctx):
    t = ctx.torch
    mha, x, mask = _module_and_input(ctx)
    per_head = mask.repeat_interleave(H, dim=0)
    with t.inference_mode():
        out = ctx.call(mha, x, x, x, attn_mask=per_head, need_weights=False)[0]
    mha.train()  # the Python path (dropout is 0): the reference for the fused one
    with t.no_grad():
        ref = mha(x, x, x, attn_mask=per_head, need_weights=False)[0]
    ctx.close(out, ref, atol=1e-4, rtol=1e-4)


def control(ctx):
    # no mask: the fused path runs and agrees with the Python path
    t = ctx.torch
    mha, x, _ = _module_and_input(ctx)
    with t.inference_mode():
        out = ctx.call(mha, x, x, x, need_weights=False)[0]
    mha.train()
    with t.no_grad():
        ref = mha(x, x, x, need_weights=False)[0]
    ctx.close(out, ref, atol=1e-4, rtol=1e-4)
