"""TRITON_MLA with an fp8 KV cache below SM89: selection accepts it, then TritonMLAImpl raises 'FP8 KV cache is not supported by the Triton MLA backend on ...'."""

from verification.cases.vllm._vllm_cuda import backend_impl, mla_impl_args, require_fa_extensions

BACKEND = "vllm"
REQUIRES = {"packages": ["vllm.platforms.interface", "vllm.v1.attention.backends.registry", "cbor2", "openai_harmony", "openai", "pydantic", "zmq", "xgrammar", "llguidance", "fastapi", "partial_json_parser", "cachetools"], "cuda": True}
# vLLM's CudaPlatform reads the capability and name of the GPU it runs on; nothing is simulated.
# The error is for GPUs below 8.9, so reproduce runs only there; the fix as written (bfloat16
# cache) is for Ampere; the control (same fp8 cache on SM89+) runs on the H200. The
# impl asks the GPU for its SM count when it is made, so these steps need the GPU itself.
STEP_REQUIRES = {"reproduce": {"cuda": True, "arch": "sm70-sm87"}, "fix_1": {"cuda": True, "arch": "sm80-sm87"},
                 "control": {"cuda": True, "arch": "sm90"}}
# A DeepSeek-V3-shaped MLA layer (576-wide latent cache) as MLAAttention makes its impl.
MLA = mla_impl_args()


def mla_layer(ctx, kv_cache_dtype, dtype="bfloat16"):
    # Every MLA backend imports vllm.model_executor.layers.attention, whose mm_encoder_attention
    # imports fa_utils, which on CUDA needs vllm_flash_attn: a build without its extensions skips.
    require_fa_extensions(ctx)
    return backend_impl(ctx, "TRITON_MLA", MLA, head_size=MLA["head_size"], use_mla=True, dtype=dtype,
                        kv_cache_dtype=kv_cache_dtype)


def reproduce(ctx):
    # --attention-backend TRITON_MLA --kv-cache-dtype fp8, in float16 so that pre-Ampere GPUs
    # reach the cache check rather than a bfloat16 one.
    ctx.expect_error(mla_layer(ctx, "fp8", dtype="float16"))


def fix_1(ctx):
    # --kv-cache-dtype bfloat16 on Ampere: the same impl is built.
    ctx.call(mla_layer(ctx, "bfloat16"))


def control(ctx):
    # The same fp8 TRITON_MLA layer on an SM89+ GPU (this H200, 9.0) is built.
    ctx.call(mla_layer(ctx, "fp8"))
