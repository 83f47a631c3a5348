"""A score_mod that indexes one grad-requiring tensor twice cannot be differentiated (compiled)."""

from verification.cases._common import TOL, ref_attention
from verification.cases.pytorch._sdpa import compiled_flex, qkv

BACKEND = "flex-attention"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["torch"]}
TIMEOUT = 600


def _bias_ref(pos_bias, L):
    return pos_bias[:L, None] + pos_bias[None, :L]


def reproduce(ctx):
    t = ctx.torch
    L = 256
    q, k, v = qkv(ctx, b=1, sq=L, sk=L, d=64, requires_grad=True)
    pos_bias = t.randn(L, device=ctx.device, requires_grad=True)

    def score_mod(s, b, h, qi, ki):
        return s + pos_bias[qi] + pos_bias[ki]

    def run():
        out = compiled_flex()(q, k, v, score_mod=score_mod)
        out.sum().backward()

    ctx.expect_error(run)


def fix_1(ctx):
    t = ctx.torch
    L = 256
    q, k, v = qkv(ctx, b=1, sq=L, sk=L, d=64, requires_grad=True)
    pos_bias = t.randn(L, device=ctx.device, requires_grad=True)
    pos_bias_k = pos_bias.clone()

    def score_mod(s, b, h, qi, ki):
        return s + pos_bias[qi] + pos_bias_k[ki]

    out = ctx.call(compiled_flex(), q, k, v, score_mod=score_mod)
    ctx.call(out.float().sum().backward)
    bias = _bias_ref(pos_bias.detach(), L)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", mask=bias), **TOL)
    if pos_bias.grad is None:
        from errkb.verify.case import Refuted

        raise Refuted("no gradient reached pos_bias")
