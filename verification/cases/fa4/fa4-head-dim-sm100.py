"""On SM100/SM110 FA4 takes head dims 8..128, (192, 128), (256, 256) or the MLA shapes."""

from verification.cases._common import TOL, fa4, first, qkv, ref_attention

REQUIRES = {"cuda": True, "arch": "sm100-sm110", "packages": ["flash_attn.cute"]}
TIMEOUT = 600


def reproduce(ctx):
    q, k, v = qkv(ctx, d=192)
    ctx.expect_error(fa4().flash_attn_func, q, k, v)


def fix_1(ctx):
    F = ctx.torch.nn.functional
    q, k, v = qkv(ctx, d=192)
    d = q.shape[-1]
    out = first(ctx.call(fa4().flash_attn_func, *(F.pad(t, (0, 256 - d)) for t in (q, k, v)),
                         softmax_scale=d ** -0.5))[..., :d]
    ctx.close(out, ref_attention(q, k, v), **TOL)


def control(ctx):
    q, k, v = qkv(ctx, d=128)
    out = first(ctx.call(fa4().flash_attn_func, q, k, v))
    ctx.close(out, ref_attention(q, k, v), **TOL)
