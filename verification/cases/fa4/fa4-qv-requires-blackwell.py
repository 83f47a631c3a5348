"""qv (MLA absorbed) runs only on Blackwell: upstream on 8.x/12.x, SGLang's vendored copy also on 9.x.

On SM90 SGLang's copy reaches the message through the shared-k/v route (k is v, head dim 512,
q taken as qv); an explicit qv next to a 64-wide q is refused earlier by its head-dim check, which
the step notes.
"""

from verification.cases._common import randn

REQUIRES = {"cuda": True, "arch": ["sm80-sm90", "sm120+"], "packages": ["flash_attn.cute"]}
TIMEOUT = 600


def _sglang_fa4(ctx):
    try:
        from sglang.kernels.ops.attention.flash_attn import cute
    except Exception as exc:  # noqa: BLE001
        ctx.skip(f"on SM90 the claim is about SGLang's vendored FA4, not importable here: {exc}")
    return cute


def reproduce(ctx):
    b, s, h = 2, 64, 16
    if ctx.cc[0] == 9:
        fa = _sglang_fa4(ctx)
        latent = randn(ctx, b, 256, 1, 512)  # one tensor passed as both k and v
        ctx.expect_error(fa.flash_attn_func, randn(ctx, b, s, h, 512), latent, latent)
        try:
            fa.flash_attn_varlen_func(randn(ctx, b, s, h, 64), randn(ctx, b, 256, 1, 64), latent,
                                      qv=randn(ctx, b, s, h, 512))
        except Exception as exc:  # noqa: BLE001 - only described
            ctx.note(f"explicit qv with a 64-wide q on SM90: {type(exc).__name__}: {str(exc)[:200]}")
        return
    from flash_attn.cute import flash_attn_varlen_func

    q = randn(ctx, b, s, h, 64)       # q_pe
    qv = randn(ctx, b, s, h, 512)     # q_nope (absorbed)
    k = randn(ctx, b, 256, 1, 64)     # pe cache
    v = randn(ctx, b, 256, 1, 512)    # latent cache
    ctx.expect_error(flash_attn_varlen_func, q, k, v, qv=qv)
