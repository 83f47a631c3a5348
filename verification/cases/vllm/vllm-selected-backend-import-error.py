"""A forced backend whose module fails to import: 'Selected backend ... Reason: [ImportError: ...]'."""

from errkb.verify.case import Refuted
from verification.cases.vllm._vllm_cuda import select_backend, selected

BACKEND = "vllm"
REQUIRES = {"packages": ["vllm.platforms.interface", "vllm.v1.attention.backends.registry", "cbor2", "openai_harmony", "openai", "pydantic", "zmq", "xgrammar", "llguidance", "fastapi", "partial_json_parser", "cachetools"], "cuda": True, "arch": "sm90"}
# vLLM's CudaPlatform reads this GPU's capability itself (9.0 on the H200); _vllm.on_cuda says what is stood in.


def reproduce(ctx):
    # FLASH_ATTN in a vLLM tree without vllm_flash_attn's _vllm_fa2_C/_vllm_fa3_C (this one):
    # vllm/vllm_flash_attn/__init__.py raises ImportError while the backend module loads.
    exc = ctx.expect_error(select_backend(ctx, "FLASH_ATTN", head_size=128))
    if "ImportError" not in str(exc) or "_vllm_fa2_C" not in str(exc):
        raise Refuted(f"not the vllm_flash_attn import failure: {exc}")


def fix_2(ctx):
    # A backend that imports here: TRITON_ATTN.
    selected(ctx, ctx.call(select_backend(ctx, "TRITON_ATTN", head_size=128)), "TRITON_ATTN")
