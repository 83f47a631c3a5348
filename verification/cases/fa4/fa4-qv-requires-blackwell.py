"""qv (MLA absorbed) runs only on Blackwell: upstream on 8.x/12.x, SGLang's vendored copy also on 9.x."""

from verification.cases._common import randn

REQUIRES = {"cuda": True, "arch": ["sm80-sm90", "sm120+"], "packages": ["flash_attn.cute"]}
TIMEOUT = 600


def reproduce(ctx):
    major, _ = ctx.torch.cuda.get_device_capability()
    if major == 9:
        try:
            from sglang.kernels.ops.attention.flash_attn.cute import flash_attn_varlen_func
        except Exception as exc:  # noqa: BLE001
            ctx.skip(f"on SM90 the claim is about SGLang's vendored FA4, not importable here: {exc}")
    else:
        from flash_attn.cute import flash_attn_varlen_func
    b, s, h = 2, 64, 16
    q = randn(ctx, b, s, h, 64)       # q_pe
    qv = randn(ctx, b, s, h, 512)     # q_nope (absorbed)
    k = randn(ctx, b, 256, 1, 64)     # pe cache
    v = randn(ctx, b, 256, 1, 512)    # latent cache
    ctx.expect_error(flash_attn_varlen_func, q, k, v, qv=qv)
