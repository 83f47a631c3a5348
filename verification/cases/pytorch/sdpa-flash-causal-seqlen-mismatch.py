"""Flash SDPA refuses is_causal when query and key lengths differ."""

from verification.cases._common import TOL, ref_attention
from verification.cases.pytorch._sdpa import in_backends, qkv, sdpa

BACKEND = "sdpa"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["torch"]}


def reproduce(ctx):
    q, k, v = qkv(ctx, sq=16, sk=128)
    ctx.expect_warning(in_backends, ["FLASH_ATTENTION"], sdpa, q, k, v, is_causal=True)


def fix_1(ctx):
    q_new, k, v = qkv(ctx, sq=1, sk=128)
    out = ctx.call(in_backends, ["FLASH_ATTENTION"], sdpa, q_new, k, v, is_causal=q_new.size(-2) > 1)
    ctx.close(out, ref_attention(q_new, k, v, layout="bhsd"), **TOL)


def fix_2(ctx):
    from torch.nn.attention.bias import causal_lower_right

    q, k, v = qkv(ctx, sq=16, sk=128)
    out = ctx.call(sdpa, q, k, v, attn_mask=causal_lower_right(q.size(-2), k.size(-2)))
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", causal=True, causal_align="bottom_right"), **TOL)
