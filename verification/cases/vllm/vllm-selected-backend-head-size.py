"""A forced backend without a kernel for the layer's head size: 'Selected backend ... Reason: [... 'head_size not supported' ...]'."""

from errkb.verify.case import Refuted
from verification.cases.vllm._vllm_cuda import require_fa_extensions, select_backend, selected
from verification.cases.vllm._engine import first

BACKEND = "vllm"
REQUIRES = {"packages": ["vllm.platforms.interface", "vllm.v1.attention.backends.registry", "cbor2", "openai_harmony", "openai", "pydantic", "zmq", "xgrammar", "llguidance", "fastapi", "partial_json_parser", "cachetools", "flashinfer"], "cuda": True, "arch": "sm90"}
# vLLM's CudaPlatform reads this GPU's capability itself (9.0 on the H200); _vllm.on_cuda says what is stood in.


def reproduce(ctx):
    # --attention-backend FLASHINFER for a Phi-style layer with head_dim 96 (FlashInfer: 64/128/256/512).
    ctx.expect_error(select_backend(ctx, "FLASHINFER", head_size=96))


def fix_1(ctx):
    # --attention-backend FLASH_ATTN: any multiple of 8 up to 256.
    require_fa_extensions(ctx)
    selected(ctx, ctx.call(select_backend(ctx, "FLASH_ATTN", head_size=96)), "FLASH_ATTN")


def fix_2(ctx):
    # No forced backend: auto-selection passes over FLASHINFER for this head size.
    path = ctx.call(select_backend(ctx, None, head_size=96))
    if "flashinfer" in path:
        raise Refuted(f"auto-selection picked {path} for head_size 96")


def control(ctx):
    # FLASHINFER forced for head_dim 128 is accepted; TRITON_ATTN (>= 32) takes 96.
    selected(ctx, ctx.call(select_backend(ctx, "FLASHINFER", head_size=128)), "FLASHINFER")
    selected(ctx, ctx.call(select_backend(ctx, "TRITON_ATTN", head_size=96)), "TRITON_ATTN")


def entry_vllm_engine(ctx):
    # vllm serve <a Llama-shaped model with head_dim 96> --attention-backend FLASHINFER
    first(ctx, ["--attention-backend", "FLASHINFER"], head_dim=96, hidden_size=384)
