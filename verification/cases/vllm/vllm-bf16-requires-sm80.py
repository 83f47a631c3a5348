"""--dtype bfloat16 on a pre-Ampere GPU: the GPU worker's dtype check raises 'Bfloat16 is only supported on GPUs with compute capability of at least 8.0...'."""

from verification.cases.vllm._vllm_cuda import check_model_dtype

BACKEND = "vllm"
REQUIRES = {"packages": ["vllm.platforms.interface", "vllm.v1.attention.backends.registry", "cbor2", "openai_harmony", "openai", "pydantic", "zmq", "xgrammar", "llguidance", "fastapi", "partial_json_parser", "cachetools"], "cuda": True}
# vLLM's CudaPlatform reads the capability and name of the GPU it runs on; nothing is simulated.
# The claim is about Volta/Turing, so reproduce and fix run only there (a fleet runner with a
# V100 or T4); the control is the same request on the H200.
STEP_REQUIRES = {"reproduce": {"cuda": True, "arch": "sm70-sm75"}, "fix_1": {"cuda": True, "arch": "sm70-sm75"},
                 "control": {"cuda": True, "arch": "sm90"}}


def reproduce(ctx):
    # vllm serve MODEL --dtype bfloat16: ModelConfig resolves torch.bfloat16, the worker refuses it.
    ctx.expect_error(check_model_dtype(ctx, "bfloat16"))


def fix_1(ctx):
    # --dtype half on the same GPU passes the check. (fix_2, LLM(dtype='float16'), reaches the same
    # ModelConfig field and the same check.)
    ctx.call(check_model_dtype(ctx, "float16"))


def control(ctx):
    # --dtype bfloat16 on an SM80+ GPU (this H200, 9.0) is accepted.
    ctx.call(check_model_dtype(ctx, "bfloat16"))
