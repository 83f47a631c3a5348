"""MLA prefill auto-selection where every candidate objects: 'No valid MLA prefill backend found with ...'."""

from errkb.verify.case import Refuted
from verification.cases.vllm._vllm_cuda import (DEEPSEEK_V3, mla_prefill_backend, on_cuda, require_fa_extensions,
                                                selector_config)

BACKEND = "vllm"
REQUIRES = {"packages": ["vllm.platforms.interface", "vllm.v1.attention.backends.registry", "cbor2", "openai_harmony", "openai", "pydantic", "zmq", "xgrammar", "llguidance", "fastapi", "partial_json_parser", "cachetools", "flashinfer"], "cuda": True, "arch": "sm90"}
# vLLM's CudaPlatform reads this GPU's capability itself (9.0 on the H200), except in fix_2, which
# simulates a B200 and runs only on one. Below 10.x FLASH_ATTN is the only prefill candidate; in a
# vLLM tree without its FlashAttention extensions it fails to import for any model, so the error
# would appear for a build reason: the reproduce step runs only where those extensions import.
STEP_REQUIRES = {"fix_2": {"cuda": True, "arch": "sm100-sm103"}}
ODD_MLA = {**DEEPSEEK_V3, "qk_nope_head_dim": 64, "qk_rope_head_dim": 32, "v_head_dim": 64}


def reproduce(ctx):
    # A DeepSeek-style model whose (qk_nope, qk_rope, v) = (64, 32, 64) no FLASH_ATTN kernel covers.
    require_fa_extensions(ctx)
    exc = ctx.expect_error(mla_prefill_backend(ctx, hf_config=ODD_MLA))
    if "Model does not have supported MLA dimensions" not in str(exc):
        raise Refuted(f"refused for another reason: {exc}")


def fix_1(ctx):
    # VLLM_MLA_DISABLE=1: the model is served as ordinary attention (no MLA layer, so no MLA
    # prefill backend), with head size qk_nope + qk_rope, which a normal backend takes.
    def run():
        with on_cuda(ctx, env={"VLLM_MLA_DISABLE": "1"}, hf_config=ODD_MLA) as CudaPlatform:
            from vllm.config import get_current_vllm_config

            model = get_current_vllm_config().model_config
            if model.use_mla:
                raise Refuted("VLLM_MLA_DISABLE=1 left use_mla on")
            head = model.get_head_size()
            path = CudaPlatform.get_attn_backend_cls(None, selector_config(head_size=head))
            ctx.note(f"use_mla False, head_size {head}: selected {path}")
    ctx.call(run)


def fix_2(ctx):
    # On a B200 (10.0) with FlashInfer installed, a prefill backend is found (the step notes which).
    ctx.call(mla_prefill_backend(ctx, capability=(10, 0)))


def control(ctx):
    # DeepSeek-V3's own layout (128, 64, 128) on this GPU: FLASH_ATTN is valid.
    require_fa_extensions(ctx)
    name = ctx.call(mla_prefill_backend(ctx))
    if name != "FLASH_ATTN":
        raise Refuted(f"selected {name}")
