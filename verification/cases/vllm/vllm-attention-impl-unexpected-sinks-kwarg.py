"""vLLM 0.10.1.1: gpt-oss's attention layer hands sinks=... to vLLM's Attention, which passes every
extra keyword to the constructor of the selected backend's implementation class; the V0
FlashAttentionImpl has no such parameter, and Python raises TypeError
"FlashAttentionImpl.__init__() got an unexpected keyword argument 'sinks'".

Run with the release's own Python files on the CPU (verification/cases/vllm/_vllm_releases.py: the
wheel's .py files only, torch 2.13.0+cpu). Each step builds the implementation class the way
Attention.__init__ does (impl_cls(num_heads, head_size, scale, num_kv_heads, alibi_slopes,
sliding_window, kv_cache_dtype, logits_soft_cap, attn_type, kv_sharing_target_layer_name,
**extra_impl_args)) with gpt-oss-20b's attention shape (64 query heads, 8 KV heads, head size 64)
and a (64,) fp32 sinks tensor as gpt_oss.py makes it. Selecting the class needs vLLM's CUDA platform on a
GPU and is not run; nothing computes attention (the kernels need a GPU), so no numbers are compared.

reproduce: vllm.attention.backends.flash_attn.FlashAttentionImpl (V0) with sinks.
fix_1 (the V1 engine): V1's default on sm80+ off Hopper, TritonAttentionImpl, takes sinks and keeps
them (the V1 FlashAttentionImpl takes the keyword too, then asserts FlashAttention 3, which V1 uses only on
Hopper: noted).
fix_2 (VLLM_ATTENTION_BACKEND=TRITON_ATTN_VLLM_V1): the name is a member of _Backend, CudaPlatform's
selector (vllm/platforms/cuda.py, read as text: it imports the compiled vllm._C at its top) returns
TritonAttentionBackend for it, and that backend's implementation class takes sinks.
fix_3 (ROCm) and fix_4 (a plugin's class): skipped, no ROCm build or plugin here.
control: V0 FlashAttentionImpl without sinks is built."""

from errkb.verify.case import Refuted
from verification.cases.vllm import _vllm_releases as rel

BACKEND = "vllm"
REQUIRES = {"cuda": False}
TIMEOUT = 1500
RELEASE = "0.10.1.1"

CODE = r'''
import torch
KW = dict(num_heads=64, head_size=64, scale=0.125, num_kv_heads=8, alibi_slopes=None, sliding_window=None,
          kv_cache_dtype="auto", logits_soft_cap=None, attn_type="decoder", kv_sharing_target_layer_name=None)
sinks = torch.zeros(64, dtype=torch.float32)
MODE = %r
out = {"raised": None}
try:
    if MODE == "v0":
        from vllm.attention.backends.flash_attn import FlashAttentionImpl as cls
        impl = cls(**KW, sinks=sinks)
    elif MODE == "v0-plain":
        from vllm.attention.backends.flash_attn import FlashAttentionImpl as cls
        impl = cls(**KW)
    elif MODE == "v1-triton":
        from vllm.v1.attention.backends.triton_attn import TritonAttentionImpl as cls
        impl = cls(**KW, sinks=sinks)
        out["kept"] = impl.sinks is sinks
        from vllm.v1.attention.backends.flash_attn import FlashAttentionImpl as fa
        try:
            fa(**KW, sinks=sinks)
            out["v1_fa"] = "built"
        except BaseException as e:
            out["v1_fa"] = errkb_raised(e)
    elif MODE == "forced":
        import os, vllm
        from vllm.platforms.interface import _Backend
        backend = _Backend["TRITON_ATTN_VLLM_V1"]
        # vllm/platforms/cuda.py imports vllm._C at its top (not here): its selector is read, not imported
        src = open(os.path.join(os.path.dirname(vllm.__file__), "platforms", "cuda.py")).read()
        from vllm.v1.attention.backends.triton_attn import TritonAttentionBackend
        cls = TritonAttentionBackend.get_impl_cls()
        impl = cls(**KW, sinks=sinks)
        out["backend"] = backend.name
        out["names_class"] = ('TRITON_ATTN_VLLM_V1 = "vllm.v1.attention.backends.triton_attn.TritonAttentionBackend"' in src
                              and "selected_backend == _Backend.TRITON_ATTN_VLLM_V1" in src)
        out["kept"] = impl.sinks is sinks
    out["cls"] = cls.__name__
except BaseException as e:
    out["raised"] = errkb_raised(e)
errkb_report(out)
'''


def _run(ctx, mode: str) -> dict:
    got = rel.run(ctx, RELEASE, CODE % mode)
    ctx.note(f"vllm {RELEASE}, mode {mode!r}: " + (f"{got['cls']} built" if not got["raised"]
                                                    else f"{got['raised']['class']}: {got['raised']['message']}"))
    return got


def reproduce(ctx):
    ctx.expect_error(rel.raise_statement, _run(ctx, "v0")["raised"])


def fix_1(ctx):
    got = _run(ctx, "v1-triton")
    ctx.call(rel.raise_statement, got["raised"])
    fa = got.get("v1_fa")
    ctx.note("V1 FlashAttentionImpl with sinks: " + (fa if isinstance(fa, str) else f"{fa['class']}: {fa['message']}"))
    if not got["kept"]:
        raise Refuted("TritonAttentionImpl did not keep the sinks tensor")


def fix_2(ctx):
    got = _run(ctx, "forced")
    ctx.call(rel.raise_statement, got["raised"])
    ctx.note(f"_Backend.{got['backend']}: CudaPlatform's selector names TritonAttentionBackend: {got['names_class']}")
    if not (got["kept"] and got["names_class"]):
        raise Refuted("the forced Triton backend's implementation does not take the sinks, or is not what the name selects")


def fix_3(ctx):
    ctx.skip("ROCm with AITER: no ROCm build of vLLM on this machine")


def fix_4(ctx):
    ctx.skip("a platform plugin's implementation class: the fix is to compare versions; no plugin here")


def control(ctx):
    got = _run(ctx, "v0-plain")
    ctx.call(rel.raise_statement, got["raised"])
