"""--attention-config.use_trtllm_attention=1 where TRT-LLM attention is unavailable for the phase: vLLM warns and uses FlashInfer's own kernels."""

from errkb.verify.case import Refuted
from verification.cases.vllm._vllm import FI_UTILS, flashinfer_utils

BACKEND = "vllm"
REQUIRES = {"packages": ["vllm.platforms.interface", "requests", "zmq"], "cuda": True, "arch": "sm90"}
# The stand-in platform reports the capability a step is about; each step runs only on that GPU,
# so a result never says a machine showed what it only simulated.
STEP_REQUIRES = {"fix_2": {"cuda": True, "arch": "sm100-sm110"}}
CUBINS = {"VLLM_HAS_FLASHINFER_CUBIN": "1", "VLLM_BATCH_INVARIANT": "0"}  # no network probe


def _use_trtllm(major, minor, *, is_prefill, force, env=CUBINS):
    import torch

    with flashinfer_utils(major, minor, env=env) as fi:
        return fi.use_trtllm_attention(num_qo_heads=32, num_kv_heads=8, num_tokens=64, max_seq_len=256,
                                       dcp_world_size=1, kv_cache_dtype="auto", q_dtype=torch.bfloat16,
                                       is_prefill=is_prefill, force_use_trtllm=force)


def reproduce(ctx):
    # H200 (9.0) has TRT-LLM (XQA) decode only: forcing it for prefill is refused with the warning.
    text, used = ctx.expect_logged(FI_UTILS, _use_trtllm, 9, 0, is_prefill=True, force=True)
    if used or "prefill" not in text:
        raise Refuted(f"used={used}, message {text!r}")


def fix_1(ctx):
    # Left on auto: the same prefill silently uses FlashInfer's kernels.
    if ctx.not_logged(FI_UTILS, _use_trtllm, 9, 0, is_prefill=True, force=None):
        raise Refuted("auto chose TRT-LLM prefill on SM90")


def fix_2(ctx):
    # Blackwell (10.0) with the cubins available: the forced prefill is honoured.
    if not ctx.not_logged(FI_UTILS, _use_trtllm, 10, 0, is_prefill=True, force=True):
        raise Refuted("forced TRT-LLM prefill not used on SM100 with cubins")


def control(ctx):
    # Forcing it for decode on the H200 is accepted (XQA decode kernel).
    if not ctx.not_logged(FI_UTILS, _use_trtllm, 9, 0, is_prefill=False, force=True):
        raise Refuted("forced TRT-LLM decode not used on SM90")
