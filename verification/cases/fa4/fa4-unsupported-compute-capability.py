"""FA4 refuses compute capability 7.x, also when FLASH_ATTENTION_ARCH names it on a newer GPU."""

import os

from verification.cases._common import TOL, fa4, first, qkv, ref_attention

REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flash_attn.cute"]}
TIMEOUT = 600


def _with_arch(value, fn):
    iface = fa4()
    old = os.environ.get("FLASH_ATTENTION_ARCH")
    try:
        if value is None:
            os.environ.pop("FLASH_ATTENTION_ARCH", None)
        else:
            os.environ["FLASH_ATTENTION_ARCH"] = value
        iface._get_device_arch.cache_clear()  # the arch is read once per process
        return fn()
    finally:
        if old is None:
            os.environ.pop("FLASH_ATTENTION_ARCH", None)
        else:
            os.environ["FLASH_ATTENTION_ARCH"] = old
        iface._get_device_arch.cache_clear()


def reproduce(ctx):
    q, k, v = qkv(ctx)
    _with_arch("sm_75", lambda: ctx.expect_error(fa4().flash_attn_func, q, k, v))


def fix_1(ctx):
    q, k, v = qkv(ctx, layout="bhsd")
    F = ctx.torch.nn.functional
    out = ctx.call(F.scaled_dot_product_attention, q, k, v, is_causal=True)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", causal=True), **TOL)


def fix_2(ctx):
    q, k, v = qkv(ctx)
    out = _with_arch(None, lambda: first(ctx.call(fa4().flash_attn_func, q, k, v)))
    ctx.close(out, ref_attention(q, k, v), **TOL)


def control(ctx):
    q, k, v = qkv(ctx)
    out = first(ctx.call(fa4().flash_attn_func, q, k, v))
    ctx.close(out, ref_attention(q, k, v), **TOL)
