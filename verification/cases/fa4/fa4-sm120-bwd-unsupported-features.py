"""The SM12x backward has no score_mod, mask_mod, deterministic mode or learnable sink."""

from verification.cases._common import fa4, first, qkv

REQUIRES = {"cuda": True, "arch": "sm120+", "packages": ["flash_attn.cute"]}
TIMEOUT = 600


def reproduce(ctx):
    from flash_attn.cute import utils

    q, k, v = qkv(ctx, requires_grad=True)
    out = first(fa4().flash_attn_func(q, k, v, score_mod=utils.create_softcap_scoremod(20.0),
                                      score_mod_bwd=utils.create_softcap_scoremod_bwd(20.0)))
    ctx.expect_error(out.float().sum().backward)
