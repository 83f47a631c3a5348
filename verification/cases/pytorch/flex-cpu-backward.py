"""FlexAttention has no CPU backward: CPU inputs that require grad are refused up front."""

from verification.cases.pytorch._sdpa import causal, causal_block_mask, close_causal, flex_qkv, sdpa

BACKEND = "flex-attention"
REQUIRES = {"packages": ["torch"], "cpu": True}


def reproduce(ctx):
    from torch.nn.attention.flex_attention import flex_attention

    q, k, v = flex_qkv(ctx, requires_grad=True)
    ctx.expect_error(flex_attention, q, k, v)


def fix_1(ctx):
    from torch.nn.attention.flex_attention import flex_attention

    q, k, v = flex_qkv(ctx, requires_grad=True)
    bm = causal_block_mask(ctx, q, k, batch=1)
    with ctx.torch.inference_mode():
        out = ctx.call(flex_attention, q.detach(), k.detach(), v.detach(), block_mask=bm)
    close_causal(ctx, out, q, k, v)


def fix_2(ctx):
    from torch.nn.attention.flex_attention import create_mask

    from errkb.verify.case import Refuted

    q, k, v = flex_qkv(ctx, requires_grad=True)
    dense = create_mask(causal, 1, 1, q.size(-2), k.size(-2), device="cpu")
    out = ctx.call(sdpa, q, k, v, attn_mask=dense)
    ctx.call(out.sum().backward)
    close_causal(ctx, out, q, k, v)
    if q.grad is None:
        raise Refuted("no gradient reached q")
