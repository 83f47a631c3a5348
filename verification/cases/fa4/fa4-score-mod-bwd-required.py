"""A score_mod without score_mod_bwd fails when autograd runs the backward."""

from verification.cases._common import TOL, fa4, first, qkv, ref_attention

REQUIRES = {"cuda": True, "arch": "sm90", "packages": ["flash_attn.cute"]}
TIMEOUT = 900
CAP = 20.0


def _mods():
    from flash_attn.cute import utils

    return utils.create_softcap_scoremod(CAP), utils.create_softcap_scoremod_bwd(CAP)


def reproduce(ctx):
    q, k, v = qkv(ctx, requires_grad=True)
    fwd, _ = _mods()
    out = first(fa4().flash_attn_func(q, k, v, score_mod=fwd))
    ctx.expect_error(out.float().sum().backward)


def fix_1(ctx):
    t = ctx.torch
    q, k, v = qkv(ctx, requires_grad=True)
    fwd, bwd = _mods()
    out = first(ctx.call(fa4().flash_attn_func, q, k, v, score_mod=fwd, score_mod_bwd=bwd))
    ctx.call(out.float().sum().backward)
    ctx.close(out, ref_attention(q, k, v, softcap=CAP), **TOL)
    q32, k32, v32 = (x.detach().float().requires_grad_() for x in (q, k, v))
    ref_attention(q32, k32, v32, softcap=CAP).sum().backward()
    ctx.close(q.grad, q32.grad, atol=5e-2, rtol=5e-2, what="dq")
    ctx.close(v.grad, v32.grad, atol=5e-2, rtol=5e-2, what="dv")
    del t


def fix_3(ctx):
    q, k, v = qkv(ctx)
    fwd, _ = _mods()
    with ctx.torch.inference_mode():
        out = first(ctx.call(fa4().flash_attn_func, q, k, v, score_mod=fwd))
    ctx.close(out, ref_attention(q, k, v, softcap=CAP), **TOL)


def control(ctx):
    q, k, v = qkv(ctx, requires_grad=True)
    out = first(ctx.call(fa4().flash_attn_func, q, k, v, softcap=CAP))
    ctx.call(out.float().sum().backward)
    ctx.close(out, ref_attention(q, k, v, softcap=CAP), **TOL)
