"""sgl-kernel's FA3 (and SGLang's own FA3 wrapper) refuse GPUs whose compute capability major is not 8 or 9, with a message saying "sm90 and above"."""

import importlib
import traceback

from errkb.verify.case import Refuted, attempt, match_message
from verification.cases._common import TOL, first, qkv, ref_attention
from verification.cases.sglang._sglk import each_wrapper

# Runs in call 3's SGLang process, beside SGLang's tree and the kernel wheels' Python files.
BACKEND = "sglang-server"
REQUIRES = {"cuda": True, "packages": ["sglang.kernels.ops.attention.flash_attention_v3"]}
# The refusal needs a GPU outside sm80-sm90 (Blackwell is "above sm90" and is refused); the control
# needs one inside.
STEP_REQUIRES = {"reproduce": {"cuda": True, "arch": ["sm70-sm75", "sm100+"]},
                 "control": {"cuda": True, "arch": "sm80-sm90"}}
V3 = "sglang.kernels.ops.attention.flash_attention_v3"


def _varlen_args(ctx):
    """One sequence of 128 tokens, packed (total, heads, dim), for sgl-kernel's varlen entry point."""
    t = ctx.torch
    q, k, v = (x[0] for x in qkv(ctx, b=1))
    cu = t.tensor([0, 128], dtype=t.int32, device=ctx.device)
    return (q, k, v), {"cu_seqlens_q": cu, "cu_seqlens_k": cu, "max_seqlen_q": 128, "max_seqlen_k": 128}


def reproduce(ctx):
    # SGLang 0.5.23's FA3 wrapper (the decode/extend entry point of --attention-backend fa3) ...
    q, k, v = qkv(ctx)
    ctx.expect_error(importlib.import_module(V3).flash_attn_with_kvcache, q, k, v)
    # ... and the varlen entry point of both kernel wheels. Their flash_attn.py needs the compiled
    # flash_ops to import; it is stood in for, and the gate is checked before anything calls it.
    args, kwargs = _varlen_args(ctx)
    for _, fa in each_wrapper(ctx):
        ctx.expect_error(fa.flash_attn_varlen_func, *args, **kwargs)


def control(ctx):
    # On sm80-sm90 with torch built for CUDA 12.3+ both gates let the call through.
    for wheel, fa in each_wrapper(ctx):
        if not ctx.call(fa.is_fa3_supported):
            raise Refuted(f"{wheel}: is_fa3_supported() is False on this GPU")
    v3 = importlib.import_module(V3)
    if not ctx.call(v3._is_fa3_supported.__wrapped__):
        raise Refuted("SGLang's _is_fa3_supported() is False on this GPU")
    # SGLang's wrapper itself: past the gate it loads the FA3 kernels. Where sgl-kernel's FA3 is
    # installed for this torch it runs and must match the reference; here the loader finds no
    # sgl_kernel FA3, which shows the call got past the gate.
    q, k, v = qkv(ctx)
    out, raised = attempt(v3.flash_attn_with_kvcache, q, k, v)
    if raised is None:
        ctx.close(first(out), ref_attention(q, k, v), **TOL)
        return
    if match_message(ctx.record["template"], str(raised)):
        ctx.observed = {"class": type(raised).__name__, "message": str(raised)[:2000]}
        raise Refuted("the wrapper refused this GPU")
    names = [f.name for f in traceback.extract_tb(raised.__traceback__)]
    if "_load_fa3_kernels" not in names:
        raise raised  # it stopped before the kernel loader: the step showed nothing
    ctx.note(f"past the gate, the FA3 kernel loader stopped: {type(raised).__name__}: {str(raised)[:300]}")
