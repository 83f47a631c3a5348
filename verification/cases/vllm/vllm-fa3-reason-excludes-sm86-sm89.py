"""vLLM 0.8.5 with VLLM_FLASH_ATTN_VERSION=3 on an RTX 4090-class GPU (compute capability 8.9): ERROR
"Cannot use FA version 3 is not supported due to FA3 is only supported on devices with compute capability >= 8
excluding 8.6 and 8.9 and Blackwell archs (>=10)", and the FlashAttention backend is left without a version.

On the CPU with vLLM 0.8.5's wheel (verification/cases/vllm/_vllm_v0.py): the tree keeps vllm._C and the bundled
FlashAttention extensions _vllm_fa2_C/_vllm_fa3_C, which load for real next to the pinned torch 2.6.0 with a stub
CUDA 12.4 driver library (nothing is called on it); NVML and torch.cuda.get_device_capability answer the step's
compute capability (vLLM's fa_utils asks vLLM's platform, vllm_flash_attn's check asks torch), noted. Each step
builds vLLM's own Attention layer (V0 engine, VLLM_USE_V1=0; 32 query heads, 8 KV heads, head size 128, fp16),
whose FlashAttentionImpl looks up the FlashAttention version in vllm/attention/utils/fa_utils.py (the same
function V1's FlashAttentionImpl calls in this release).

reproduce: 8.9, VLLM_FLASH_ATTN_VERSION=3: the ERROR line on vllm.attention.utils.fa_utils, and the layer's
vllm_flash_attn_version is None. Also checked, each refuting the step if it differs: 12.0 (RTX 50xx) with the
same variable logs the same line; 10.0 (B200) is switched to FA2 with a warning first and logs none; 9.0 (H100)
logs none and gets version 3.
fix_1: VLLM_FLASH_ATTN_VERSION=2 on 8.9, and the variable unset on 8.9 and 12.0: no line, version 2.
fix_2: VLLM_ATTENTION_BACKEND=FLASHINFER with the variable still 3, on 12.0 and on 7.5: no line, the layer is
FlashInferImpl (vLLM 0.8.5 imports FlashInfer lazily; its kernels need a GPU: not run).
reproduce also checks, outside the record's range, vLLM 0.13.0's wheel (torch 2.9.0, its FA2/FA3 extensions loading with a stub CUDA 12.8
driver; vllm.attention.utils.fa_utils.get_flash_attn_version() under a default VllmConfig) on 12.0 with the variable
3 must log another reason, not the record's: it logs "... FA3 is only supported on devices with compute capability
9.0" and still returns no version (so the record's former fix 3, "upgrade vLLM", changed the wording only: removed
from the record, see its corrections)."""

import logging

from errkb.verify.case import Refuted, match_message
from verification.cases import _venv
from verification.cases.vllm import _vllm_v0 as v0

BACKEND = "vllm"
REQUIRES = {"cuda": False}
TIMEOUT = 2400
RELEASE = "0.8.5"
NEWER = "0.13.0"
LOGGER = "vllm.attention.utils.fa_utils"
LAYER = dict(mode="layer", dtype="float16", kv_cache_dtype="auto", **v0.HEADS,
             impl_attrs=["vllm_flash_attn_version"])


def _layer(ctx, cap, **env):
    extra = {"VLLM_USE_V1": "0", **env}
    got, res = v0.run_code(ctx, RELEASE, v0.LAYER, cap=cap, torch_cap=True, extra_env=extra, **LAYER)
    v0.described(ctx, RELEASE, got, res, f"Attention layer on {cap[0]}.{cap[1]}", extra_env=env,
                 loggers=("vllm.attention", "vllm.platforms"))
    return got, res


def _fa_lines(res, level=logging.ERROR):
    return [r["msg"] for r in v0.records(res) if r["name"] == LOGGER and r["level"] == level]


def _version(got, want):
    v0.built(got, "FlashAttentionImpl")
    if got["impl_attrs"]["vllm_flash_attn_version"] != want:
        raise AssertionError(f"FlashAttention version {got['impl_attrs']['vllm_flash_attn_version']}, not {want}")


def reproduce(ctx):
    got, res = _layer(ctx, (8, 9), VLLM_FLASH_ATTN_VERSION="3")
    v0.expect_line(ctx, res, LOGGER, logging.ERROR)
    if got["impl_attrs"]["vllm_flash_attn_version"] is not None:
        raise Refuted(f"the layer got FlashAttention version {got['impl_attrs']['vllm_flash_attn_version']}")
    _, res = _layer(ctx, (12, 0), VLLM_FLASH_ATTN_VERSION="3")
    if not any("FA version 3 is not supported" in m for m in _fa_lines(res)):
        raise Refuted("compute capability 12.0 with VLLM_FLASH_ATTN_VERSION=3 did not log the line")
    got, res = _layer(ctx, (10, 0), VLLM_FLASH_ATTN_VERSION="3")
    if _fa_lines(res) or got["impl_attrs"]["vllm_flash_attn_version"] != 2:
        raise Refuted(f"10.0 was not switched to FA2 without the line: {_fa_lines(res)}, {got['impl_attrs']}")
    got, res = _layer(ctx, (9, 0))
    if _fa_lines(res) or got["impl_attrs"]["vllm_flash_attn_version"] != 3:
        raise Refuted(f"9.0 did not get FA3 without an error: {_fa_lines(res)}, {got['impl_attrs']}")
    got, res = v0.run_code(ctx, NEWER, FA_VERSION, cap=(12, 0), torch_cap=True, extra_env={"VLLM_FLASH_ATTN_VERSION": "3"})
    v0.described(ctx, NEWER, got, res, "get_flash_attn_version() on 12.0", extra_env={"VLLM_FLASH_ATTN_VERSION": "3"},
                 loggers=("vllm.attention",))
    _venv.raise_reported(got)
    newer = _fa_lines(res)
    if any(match_message(ctx.record["template"], m) for m in newer) or not newer:
        raise Refuted(f"vLLM {NEWER} (outside the record's range) on 12.0 with FA3 forced logged {newer}")
    if got["impl_attrs"]["fa_version"] is not None:
        raise Refuted(f"vLLM {NEWER} on 12.0 with FA3 forced got FlashAttention version {got['impl_attrs']['fa_version']}")


def fix_1(ctx):
    got, res = _layer(ctx, (8, 9), VLLM_FLASH_ATTN_VERSION="2")
    ctx.not_logged(LOGGER, v0.relog, res)
    ctx.call(_version, got, 2)
    for cap in ((8, 9), (12, 0)):
        got, res = _layer(ctx, cap)
        ctx.not_logged(LOGGER, v0.relog, res)
        ctx.call(_version, got, 2)


def fix_2(ctx):
    for cap in ((12, 0), (7, 5)):
        got, res = _layer(ctx, cap, VLLM_FLASH_ATTN_VERSION="3", VLLM_ATTENTION_BACKEND="FLASHINFER")
        v0.quiet(ctx, got, res, "FlashInferImpl", LOGGER)


FA_VERSION = r'''
out = {"torch": torch.__version__, "vllm": None, "platform": None, "capability": None, "raised": None}
try:
    errkb_platform(out)
    from vllm.config import VllmConfig, set_current_vllm_config
    from vllm.attention.utils.fa_utils import get_flash_attn_version
    with set_current_vllm_config(VllmConfig()):
        out["impl_attrs"] = {"fa_version": get_flash_attn_version()}
except BaseException as e:
    out["raised"] = errkb_raised(e)
errkb_report(out)
'''

