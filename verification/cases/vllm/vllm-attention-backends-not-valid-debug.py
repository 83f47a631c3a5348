"""vLLM 0.13.0, no backend forced, a layer with attention sinks (gpt-oss-like: head size 64, bf16) on a GPU below
compute capability 9.0: with VLLM_LOGGING_LEVEL=DEBUG the CUDA platform logs DEBUG "Some attention backends are
not valid for cuda with AttentionSelectorConfig(...). Reasons: {...}." and then picks TRITON_ATTN.

On the CPU with vLLM 0.13.0's own Python files (verification/cases/vllm/_vllm_releases.py: the wheel's .py files
next to torch 2.13.0+cpu) and, beside them, what the selection imports that the helper's environment lacks (EXTRA,
--no-deps --target: prometheus_client, and flashinfer-python 0.5.3, the release vLLM 0.13.0's METADATA pins, with
apache-tvm-ffi and nvidia-ml-py, which its import needs). Stand-ins, said in each step's notes: NVML answers as one
device of compute capability 8.9 (verification/cases/vllm/_vllm_v0.py's PRELUDE), so vLLM takes its own
CudaPlatform; vllm/platforms/cuda.py imports the compiled vllm._C at its top, which is an errkb stand-in here
(nothing on this path calls it: a call would end the step as an error). The bundled FlashAttention extensions are
absent, as in any build without them: vLLM logs an ERROR that FA2 is unavailable, and FLASH_ATTN's sink and fp8
answers are what an FA2 build gives on this GPU anyway (both need FA3, which 0.13.0 runs only on 9.x). Each step
calls vllm.attention.selector.get_attn_backend under a default VllmConfig, as the model runner does per layer.

reproduce: head size 64, bf16, KV cache "auto", has_sink=True, VLLM_LOGGING_LEVEL=DEBUG: the DEBUG line on
vllm.platforms.cuda (its reasons are noted), and TRITON_ATTN is chosen.
fix_1 (read the reasons): the fix's `grep -E 'not valid for|attention backend out of'` pattern finds both lines in
what vLLM logged with VLLM_LOGGING_LEVEL=DEBUG; at the default level neither the DEBUG line nor any other match of
the record's template is printed (noted: the INFO "Using ..." line is).
fix_2 (remove the setting a preferred backend rejects): without sinks, --kv-cache-dtype fp8_e5m2 keeps FLASH_ATTN out
("kv_cache_dtype not supported"); with "auto" FLASH_ATTN has no reason and is chosen."""

import logging
import re

from errkb.verify.case import Refuted
from verification.cases import _builds as b
from verification.cases import _venv
from verification.cases.vllm import _vllm_releases as rel
from verification.cases.vllm import _vllm_v0 as v0

BACKEND = "vllm"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
RELEASE = "0.13.0"
LOGGER = "vllm.platforms.cuda"
EXTRA = ("prometheus_client==0.26.0", "flashinfer-python==0.5.3", "apache-tvm-ffi==0.1.15.post2",
         "nvidia-ml-py==13.615.71")
GREP = re.compile("not valid for|attention backend out of")
STANDIN = ("stand-in: vllm._C (compiled; vllm/platforms/cuda.py imports it at its top) is an errkb stand-in module "
           "in this tree of Python files; nothing on the selection path calls it")

SELECT = r'''
import vllm   # 0.13.0's package imports its API lazily: the stand-in goes in before anything asks for the platform
sys.path.append(%r)
from errkb.verify.standin import install
install("vllm._C")
out = {"raised": None}
try:
    errkb_platform(out)
    from vllm.attention.selector import get_attn_backend
    from vllm.config import VllmConfig, set_current_vllm_config
    s = ARGS["select"]
    with set_current_vllm_config(VllmConfig()):
        backend = get_attn_backend(s["head_size"], getattr(torch, s["dtype"]), s["kv_cache_dtype"], 16,
                                   has_sink=s["has_sink"])
    out["backend"] = [backend.get_name(), backend.__module__]
except BaseException as e:
    out["raised"] = errkb_raised(e)
errkb_report(out)
''' % str(v0.Path(__file__).resolve().parents[3])


def _select(ctx, debug=True, **select):
    extra = b.pip_target(ctx, "target-vllm-0.13-selection-deps", "--no-deps", *EXTRA, env=rel.env(ctx),
                         what="what vLLM 0.13.0's backend selection imports besides the helper's environment")
    env = {"ERRKB_VLLM_ARGS": v0.json.dumps({"cap": [8, 9], "select": select}), "HF_HUB_OFFLINE": "1"}
    if debug:
        env["VLLM_LOGGING_LEVEL"] = "DEBUG"
    root = rel.release(ctx, RELEASE)
    res = b.run_with_torch(ctx, v0.PRELUDE + SELECT, env=rel.env(ctx), path=[root, extra], extra_env=env)
    got = _venv.reported(res, v0.MARK)
    if got["raised"] and got["raised"][0] in ("ModuleNotFoundError", "StandInReached"):
        raise RuntimeError(f"the child stopped on {got['raised']}")
    for note in (v0.STANDIN_NOTE.format(cap="8.9"), STANDIN, "with " + " ".join(EXTRA) + " (--no-deps --target)"):
        if note not in ctx.notes:
            ctx.note(note)
    logged = [(r["level"], r["msg"]) for r in v0.records(res) if r["name"] == LOGGER]
    ctx.note(f"vllm {got.get('vllm')}, {got.get('platform')} {tuple(got.get('capability') or ())}, {select}, "
             f"VLLM_LOGGING_LEVEL={'DEBUG' if debug else '(unset)'}: -> {got.get('backend') or got['raised']}; "
             f"{LOGGER} logged {[(logging.getLevelName(l), m[:400]) for l, m in logged]}")
    return got, res


def reproduce(ctx):
    got, res = _select(ctx, head_size=64, dtype="bfloat16", kv_cache_dtype="auto", has_sink=True)
    v0.expect_line(ctx, res, LOGGER, logging.DEBUG)
    if got["backend"] is None or got["backend"][0] != "TRITON_ATTN":
        raise Refuted(f"the selector did not go on to TRITON_ATTN: {got.get('backend') or got['raised']}")


def fix_1(ctx):
    sinks = dict(head_size=64, dtype="bfloat16", kv_cache_dtype="auto", has_sink=True)
    _, res = _select(ctx, **sinks)
    found = [r["msg"] for r in v0.records(res) if GREP.search(r["msg"])]
    if not (any("not valid for" in m for m in found) and any("attention backend out of" in m for m in found)):
        raise Refuted(f"the fix's grep pattern does not find both lines: {found}")
    got, res = _select(ctx, debug=False, **sinks)
    ctx.not_logged(LOGGER, v0.relog, res)
    ctx.call(_venv.raise_reported, got)


def _reasons(res):
    line = next((r["msg"] for r in v0.records(res) if r["name"] == LOGGER and "not valid for" in r["msg"]), "")
    return line.split("Reasons: ", 1)[-1]


def fix_2(ctx):
    plain = dict(head_size=64, dtype="bfloat16", has_sink=False)
    got, res = _select(ctx, kv_cache_dtype="fp8_e5m2", **plain)
    if "FLASH_ATTN: [kv_cache_dtype not supported" not in _reasons(res):
        raise Refuted(f"fp8_e5m2 did not keep FLASH_ATTN out for its KV-cache dtype: {_reasons(res)}")
    got, res = _select(ctx, kv_cache_dtype="auto", **plain)
    ctx.call(_venv.raise_reported, got)
    if "FLASH_ATTN:" in _reasons(res) or got["backend"][0] != "FLASH_ATTN":
        raise Refuted(f"with 'auto' FLASH_ATTN was not chosen: {got['backend']}, reasons {_reasons(res)}")
