"""When the vendored FA4 CuTe package fails to import, SGLang's FA4 wrapper raises ImportError on use."""

import importlib
import sys

from verification.cases._common import TOL, first, qkv, ref_attention
from verification.cases.sglang._sgl import WRAPPER, wrapper

BACKEND = "sglang"
REQUIRES = {"packages": ["torch", "sglang.kernels.ops.attention.flash_attention_v4"]}
STEP_REQUIRES = {"control": {"cuda": True, "arch": "sm90+", "packages": ["sglang.kernels.ops.attention.flash_attn.cute"]}}
TIMEOUT = 600


def _fresh_wrapper_without_cutlass():
    """Import the wrapper again with the CuTe DSL hidden (as on a machine without nvidia-cutlass-dsl)."""
    saved = {n: m for n, m in sys.modules.items()
             if n == "cutlass" or n.startswith(("cutlass.", "sglang.kernels.ops.attention"))}
    for n in saved:
        del sys.modules[n]
    sys.modules["cutlass"] = None
    try:
        return importlib.import_module(WRAPPER)
    finally:
        for n in [n for n in sys.modules if n.startswith("sglang.kernels.ops.attention")]:
            del sys.modules[n]
        sys.modules.pop("cutlass", None)
        sys.modules.update(saved)


def reproduce(ctx):
    mod = _fresh_wrapper_without_cutlass()
    if mod.is_flash_attention_v4_available():
        from errkb.verify.case import Refuted

        raise Refuted("the wrapper imported its FA4 kernels without the CuTe DSL")
    q, k, v = qkv(ctx, b=1, sq=8, sk=8)
    ctx.expect_error(mod.flash_attn_varlen_func, q, k, v)


def control(ctx):
    q, k, v = qkv(ctx)
    out = first(ctx.call(wrapper().flash_attn_varlen_func, q, k, v))
    ctx.close(out, ref_attention(q, k, v), **TOL)
