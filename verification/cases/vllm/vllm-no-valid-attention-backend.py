"""Auto-selection where every backend on the GPU's list objects: 'No valid attention backend found ...'."""

from verification.cases.vllm._vllm_cuda import select_backend
from verification.cases.vllm._engine import first

BACKEND = "vllm"
REQUIRES = {"packages": ["vllm.platforms.interface", "vllm.v1.attention.backends.registry", "cbor2", "openai_harmony", "openai", "pydantic", "zmq", "xgrammar", "llguidance", "fastapi", "partial_json_parser", "cachetools"], "cuda": True, "arch": "sm90"}
# vLLM's CudaPlatform reads this GPU's capability itself (9.0 on the H200); _vllm.on_cuda says what is stood in.


def reproduce(ctx):
    # --block-size 8: every non-MLA CUDA backend needs a multiple of 16 (or cannot import here).
    ctx.expect_error(select_backend(ctx, None, block_size=8))


def fix_1(ctx):
    # The default block size (not user-specified: None in the selector config), then --block-size 16.
    ctx.call(select_backend(ctx, None, block_size=None))
    ctx.call(select_backend(ctx, None, block_size=16))


def fix_3(ctx):
    # KV-cache quantization dropped: --kv-cache-dtype auto with the same layer.
    ctx.call(select_backend(ctx, None, kv_cache_dtype="auto"))


def entry_vllm_engine(ctx):
    # vllm serve <Llama-shaped> --block-size 8
    first(ctx, ["--block-size", "8"])
