"""softcap and score_mod are exclusive; fold the cap into the score_mod."""

from verification.cases._common import TOL, fa4, first, qkv, ref_attention

REQUIRES = {"cuda": True, "arch": "sm90", "packages": ["flash_attn.cute"]}
TIMEOUT = 600
CAP = 20.0


def _cap_mod():
    from flash_attn.cute import utils

    return utils.create_softcap_scoremod(CAP)


def reproduce(ctx):
    q, k, v = qkv(ctx)
    ctx.expect_error(fa4().flash_attn_func, q, k, v, softcap=CAP, score_mod=_cap_mod())


def fix_1(ctx):
    q, k, v = qkv(ctx)
    with ctx.torch.no_grad():
        out = first(ctx.call(fa4().flash_attn_func, q, k, v, score_mod=_cap_mod()))
    ctx.close(out, ref_attention(q, k, v, softcap=CAP), **TOL)


def control(ctx):
    q, k, v = qkv(ctx)
    out = first(ctx.call(fa4().flash_attn_func, q, k, v, softcap=CAP))
    ctx.close(out, ref_attention(q, k, v, softcap=CAP), **TOL)
