"""A non-MLA backend forced for an MLA layer: 'Selected backend ... Reason: [... 'MLA not supported' ...]'."""

from verification.cases.vllm._vllm_cuda import require_fa_extensions, select_backend, selected
from verification.cases.vllm._engine import first

BACKEND = "vllm"
REQUIRES = {"packages": ["vllm.platforms.interface", "vllm.v1.attention.backends.registry", "cbor2", "openai_harmony", "openai", "pydantic", "zmq", "xgrammar", "llguidance", "fastapi", "partial_json_parser", "cachetools"], "cuda": True, "arch": "sm90"}
# vLLM's CudaPlatform reads this GPU's capability itself (9.0 on the H200); _vllm.on_cuda says what is stood in.
MLA = {"head_size": 576, "use_mla": True}  # DeepSeek-V2/V3 latent width 512 + 64


def reproduce(ctx):
    ctx.expect_error(select_backend(ctx, "TRITON_ATTN", **MLA))


def fix_1(ctx):
    # --attention-backend TRITON_MLA, then no forced backend (vLLM's MLA list for this GPU).
    # Every MLA backend imports vllm.model_executor.layers.attention, whose mm_encoder_attention
    # imports fa_utils, which on CUDA needs vllm_flash_attn: without its extensions none loads.
    require_fa_extensions(ctx)
    selected(ctx, ctx.call(select_backend(ctx, "TRITON_MLA", **MLA)), "TRITON_MLA")
    ctx.call(select_backend(ctx, None, **MLA))


def control(ctx):
    selected(ctx, ctx.call(select_backend(ctx, "TRITON_ATTN", head_size=128)), "TRITON_ATTN")


def entry_vllm_engine(ctx):
    # vllm serve <DeepSeek-V3-shaped> --attention-backend TRITON_ATTN (a non-MLA backend for an MLA model)
    first(ctx, ["--attention-backend", "TRITON_ATTN"], model="deepseek-v3")
