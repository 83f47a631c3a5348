"""A forced backend whose checks fail raises 'Selected backend ... is not valid'; vLLM's CUDA selector on this GPU."""

from verification.cases.vllm._vllm_cuda import select_backend, selected
from verification.cases.vllm._engine import first

BACKEND = "vllm"
REQUIRES = {"packages": ["vllm.platforms.interface", "vllm.v1.attention.backends.registry", "cbor2", "openai_harmony", "openai", "pydantic", "zmq", "xgrammar", "llguidance", "fastapi", "partial_json_parser", "cachetools"], "cuda": True, "arch": "sm90"}
# vLLM's CudaPlatform reads this GPU's capability itself (9.0 on the H200); _vllm.on_cuda says what is stood in.


def reproduce(ctx):
    # --attention-backend TRITON_ATTN for a layer with head_size 16 (TRITON_ATTN needs >= 32).
    ctx.expect_error(select_backend(ctx, "TRITON_ATTN", head_size=16))


def fix_1(ctx):
    # The pin dropped: auto-selection for a layer TRITON_ATTN accepts picks a backend without the error.
    ctx.call(select_backend(ctx, None, head_size=128))


def fix_2(ctx):
    # A backend that covers what the reason names: TRITON_ATTN for head_size 96 (FLASHINFER's list is 64/128/256/512).
    selected(ctx, ctx.call(select_backend(ctx, "TRITON_ATTN", head_size=96)), "TRITON_ATTN")


def control(ctx):
    selected(ctx, ctx.call(select_backend(ctx, "TRITON_ATTN", head_size=128)), "TRITON_ATTN")


def entry_vllm_engine(ctx):
    # vllm serve <a model with head_dim 16> --attention-backend TRITON_ATTN
    first(ctx, ["--attention-backend", "TRITON_ATTN"], head_dim=16, hidden_size=64)
