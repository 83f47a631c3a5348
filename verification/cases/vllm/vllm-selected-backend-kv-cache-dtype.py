"""A forced backend that does not list the --kv-cache-dtype: 'Selected backend ... Reason: [... 'kv_cache_dtype not supported' ...]'."""

from verification.cases.vllm._vllm_cuda import select_backend, selected
from verification.cases.vllm._engine import first

BACKEND = "vllm"
REQUIRES = {"packages": ["vllm.platforms.interface", "vllm.v1.attention.backends.registry", "cbor2", "openai_harmony", "openai", "pydantic", "zmq", "xgrammar", "llguidance", "fastapi", "partial_json_parser", "cachetools"], "cuda": True, "arch": "sm90"}
# vLLM's CudaPlatform reads this GPU's capability itself (9.0 on the H200); _vllm.on_cuda says what is stood in.


def reproduce(ctx):
    # TRITON_ATTN with --kv-cache-dtype nvfp4 (not in its supported_kv_cache_dtypes).
    ctx.expect_error(select_backend(ctx, "TRITON_ATTN", kv_cache_dtype="nvfp4"))


def fix_2(ctx):
    # The same forced backend with --kv-cache-dtype auto.
    selected(ctx, ctx.call(select_backend(ctx, "TRITON_ATTN", kv_cache_dtype="auto")), "TRITON_ATTN")


def control(ctx):
    # fp8 is in TRITON_ATTN's list, and this GPU (SM89+) can read it.
    selected(ctx, ctx.call(select_backend(ctx, "TRITON_ATTN", kv_cache_dtype="fp8")), "TRITON_ATTN")


def entry_vllm_engine(ctx):
    # vllm serve <Llama-shaped> --attention-backend TRITON_ATTN --kv-cache-dtype nvfp4
    first(ctx, ["--attention-backend", "TRITON_ATTN", "--kv-cache-dtype", "nvfp4"])
