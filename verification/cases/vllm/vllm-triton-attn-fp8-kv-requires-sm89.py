"""TRITON_ATTN with an fp8 KV cache below SM89: selection accepts it, then TritonAttentionImpl raises 'FP8 KV cache is not supported by the Triton attention backend on ...'."""

from verification.cases.vllm._vllm_cuda import DECODER_IMPL, backend_impl, select_backend, selected

BACKEND = "vllm"
REQUIRES = {"packages": ["vllm.platforms.interface", "vllm.v1.attention.backends.registry", "cbor2", "openai_harmony", "openai", "pydantic", "zmq", "xgrammar", "llguidance", "fastapi", "partial_json_parser", "cachetools"], "cuda": True}
# vLLM's CudaPlatform reads the capability and name of the GPU it runs on; nothing is simulated.
# The error is for GPUs below 8.9 (V100, T4, A100, A10, Orin), so those steps run only there;
# the control (same fp8 cache on SM89+) runs on the H200.
STEP_REQUIRES = {"reproduce": {"cuda": True, "arch": "sm70-sm87"}, "fix_1": {"cuda": True, "arch": "sm70-sm87"},
                 "fix_2": {"cuda": True, "arch": "sm80-sm87", "packages": ["flashinfer"]},
                 "control": {"cuda": True, "arch": "sm90"}}


def reproduce(ctx):
    # --attention-backend TRITON_ATTN --dtype half --kv-cache-dtype fp8: the forced backend is
    # selected (fp8 is in its list), its impl refuses the cache when the layer is made.
    ctx.expect_error(backend_impl(ctx, "TRITON_ATTN", DECODER_IMPL, dtype="float16", kv_cache_dtype="fp8"))


def fix_1(ctx):
    # --kv-cache-dtype float16 with --dtype half: the same impl is built.
    ctx.call(backend_impl(ctx, "TRITON_ATTN", DECODER_IMPL, dtype="float16", kv_cache_dtype="float16"))


def fix_2(ctx):
    # On Ampere, --attention-backend FLASHINFER keeps the fp8 cache: vLLM selects it for this layer.
    selected(ctx, ctx.call(select_backend(ctx, "FLASHINFER", dtype="bfloat16", kv_cache_dtype="fp8")), "FLASHINFER")


def control(ctx):
    # The same fp8 TRITON_ATTN layer on an SM89+ GPU (this H200, 9.0) is built.
    ctx.call(backend_impl(ctx, "TRITON_ATTN", DECODER_IMPL, dtype="float16", kv_cache_dtype="fp8"))
