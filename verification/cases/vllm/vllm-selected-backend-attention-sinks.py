"""A forced backend that cannot serve attention sinks: 'Selected backend ... Reason: [... 'attention sinks not supported' ...]'."""

from verification.cases.vllm._vllm_cuda import require_fa_extensions, select_backend, selected

BACKEND = "vllm"
REQUIRES = {"packages": ["vllm.platforms.interface", "vllm.v1.attention.backends.registry", "cbor2", "openai_harmony", "openai", "pydantic", "zmq", "xgrammar", "llguidance", "fastapi", "partial_json_parser", "cachetools", "flashinfer"], "cuda": True, "arch": "sm90"}
# vLLM's CudaPlatform reads this GPU's capability itself (9.0 on the H200), except in fix_3, which
# simulates a B200 and runs only on one. gpt-oss layers: head_size 64 with sinks.
STEP_REQUIRES = {"fix_3": {"cuda": True, "arch": "sm100-sm103"}}
SINKS = {"head_size": 64, "has_sink": True}
NO_TRTLLM = {"use_trtllm_attention": False}


def reproduce(ctx):
    # --attention-backend FLASHINFER --attention-config.use_trtllm_attention false: FlashInfer's
    # sink support is its TRT-LLM (XQA) decode path, switched off here.
    ctx.expect_error(select_backend(ctx, "FLASHINFER", attention=NO_TRTLLM, **SINKS))


def fix_1(ctx):
    # --attention-backend TRITON_ATTN, then no forced backend: both serve the sink layer.
    selected(ctx, ctx.call(select_backend(ctx, "TRITON_ATTN", attention=NO_TRTLLM, **SINKS)), "TRITON_ATTN")
    ctx.call(select_backend(ctx, None, attention=NO_TRTLLM, **SINKS))


def fix_2(ctx):
    # FLASH_ATTN on Hopper without a version pin resolves FA3, which has sinks.
    require_fa_extensions(ctx)
    selected(ctx, ctx.call(select_backend(ctx, "FLASH_ATTN", **SINKS)), "FLASH_ATTN")


def fix_3(ctx):
    # An offline B200 whose FlashInfer cubins are installed (VLLM_HAS_FLASHINFER_CUBIN=1 stands for
    # flashinfer-cubin): TRT-LLM prefill and decode count as available, so FLASHINFER takes sinks.
    cubins = {"VLLM_HAS_FLASHINFER_CUBIN": "1", "VLLM_BATCH_INVARIANT": "0"}
    selected(ctx, ctx.call(select_backend(ctx, "FLASHINFER", capability=(10, 0), env=cubins, **SINKS)), "FLASHINFER")


def control(ctx):
    # The same forced FLASHINFER and use_trtllm_attention false for a layer without sinks.
    selected(ctx, ctx.call(select_backend(ctx, "FLASHINFER", attention=NO_TRTLLM, head_size=64)), "FLASHINFER")
