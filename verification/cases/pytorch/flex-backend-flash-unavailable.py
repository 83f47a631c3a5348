"""BACKEND='FLASH' without flash_attn.cute (flash-attn-4) importable fails at compile time."""

import sys

from verification.cases._common import TOL, ref_attention
from verification.cases.pytorch._sdpa import compiled_flex, qkv

BACKEND = "flex-attention"
REQUIRES = {"cuda": True, "arch": "sm90+", "packages": ["torch"]}
STEP_REQUIRES = {"fix_1": {"packages": ["flash_attn.cute"]}}
TIMEOUT = 600


def _flash_hidden(fn):
    """Run fn as if flash-attn-4 were not installed (find_spec sees a None module entry)."""
    from torch._inductor.kernel.flex import flex_flash_attention as ffa

    saved = {n: sys.modules[n] for n in ("flash_attn", "flash_attn.cute") if n in sys.modules}
    sys.modules["flash_attn.cute"] = None
    ffa.ensure_flash_available.cache_clear()
    try:
        return fn()
    finally:
        sys.modules.pop("flash_attn.cute", None)
        sys.modules.update(saved)
        ffa.ensure_flash_available.cache_clear()


def reproduce(ctx):
    q, k, v = qkv(ctx, b=1, d=64)
    flex = compiled_flex()
    _flash_hidden(lambda: ctx.expect_error(flex, q, k, v, kernel_options={"BACKEND": "FLASH"}))


def fix_1(ctx):
    q, k, v = qkv(ctx, b=1, d=64)
    out = ctx.call(compiled_flex(), q, k, v, kernel_options={"BACKEND": "FLASH"})
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **TOL)


def fix_2(ctx):
    q, k, v = qkv(ctx, b=1, d=64)
    out = ctx.call(compiled_flex(), q, k, v)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **TOL)
