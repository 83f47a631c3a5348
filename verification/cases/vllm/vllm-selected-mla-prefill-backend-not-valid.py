"""A pinned MLA prefill backend whose checks fail: 'Selected MLA prefill backend ... is not valid ...'."""

from errkb.verify.case import Refuted
from verification.cases.vllm._vllm_cuda import mla_prefill_backend, require_fa_extensions

BACKEND = "vllm"
REQUIRES = {"packages": ["vllm.platforms.interface", "vllm.v1.attention.backends.registry", "cbor2", "openai_harmony", "openai", "pydantic", "zmq", "xgrammar", "llguidance", "fastapi", "partial_json_parser", "cachetools"], "cuda": True, "arch": "sm90"}
# vLLM's CudaPlatform reads this GPU's capability itself (9.0 on the H200), except in the control,
# which simulates a B200 and runs only on one. The model is a one-layer DeepSeek-V3-shaped config.
STEP_REQUIRES = {"control": {"cuda": True, "arch": "sm100-sm103", "packages": ["flashinfer"]}}


def reproduce(ctx):
    # A B200 recipe's pins on this GPU: TRTLLM_RAGGED, then FLASHINFER; both run only on 10.x.
    for name in ("FLASHINFER", "TRTLLM_RAGGED"):
        exc = ctx.expect_error(mla_prefill_backend(ctx, mla_prefill_backend=name))
        if "compute capability" not in str(exc):
            raise Refuted(f"{name} was refused for another reason: {exc}")


def fix_1(ctx):
    # The pin removed: auto-selection picks FLASH_ATTN, the only candidate below 10.x.
    require_fa_extensions(ctx)
    name = ctx.call(mla_prefill_backend(ctx))
    if name != "FLASH_ATTN":
        raise Refuted(f"auto-selection picked {name}")


def control(ctx):
    # The same TRTLLM_RAGGED pin on a Blackwell GPU (10.0) with FlashInfer installed is accepted.
    name = ctx.call(mla_prefill_backend(ctx, capability=(10, 0), mla_prefill_backend="TRTLLM_RAGGED"))
    if name != "TRTLLM_RAGGED":
        raise Refuted(f"selected {name}")
