"""flex_attention outside torch.compile needs Dynamo support in this interpreter."""

from verification.cases.pytorch._sdpa import causal, causal_block_mask, close_causal, flex_qkv, sdpa

BACKEND = "flex-attention"
REQUIRES = {"packages": ["torch"], "cpu": True}


def reproduce(ctx):
    if ctx.torch._dynamo.is_dynamo_supported():
        ctx.skip("needs an interpreter without Dynamo support (this one has it)")
    from torch.nn.attention.flex_attention import flex_attention

    q, k, v = flex_qkv(ctx)
    ctx.expect_error(flex_attention, q, k, v)


def fix_2(ctx):
    from torch.nn.attention.flex_attention import create_mask, flex_attention

    q, k, v = flex_qkv(ctx)
    if ctx.torch._dynamo.is_dynamo_supported():
        out = ctx.call(flex_attention, q, k, v, block_mask=causal_block_mask(ctx, q, k))
    else:
        dense = create_mask(causal, 1, 1, q.size(-2), k.size(-2), device=q.device)
        out = ctx.call(sdpa, q, k, v, attn_mask=dense)
    close_causal(ctx, out, q, k, v)
