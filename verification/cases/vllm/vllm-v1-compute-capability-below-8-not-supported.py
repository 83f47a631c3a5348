"""vLLM 0.8.5 with VLLM_USE_V1=1 on a Turing GPU (compute capability 7.5): EngineArgs.create_engine_config()
raises NotImplementedError "VLLM_USE_V1=1 is not supported with Compute Capability < 8.0.".

On the CPU with vLLM 0.8.5's wheel and its pinned torch 2.6.0 (verification/cases/vllm/_vllm_v0.py: vllm._C and
the FlashAttention extensions load for real with a stub CUDA 12.4 driver library; NVML answers as one device of
the step's compute capability, noted). Each step runs `vllm serve <folder>` as far as the engine configuration:
EngineArgs(model=<a two-layer Llama config.json in a temporary folder>, skip_tokenizer_init=True)
.create_engine_config(), where 0.8.5 asks EngineArgs._is_v1_supported_oracle whether V1 can run.

reproduce: 7.5, VLLM_USE_V1=1: the record's NotImplementedError. Also checked (refuting the step if it differs):
7.0 (V100) raises the same; 8.0 (A100) with VLLM_USE_V1=1 gets a V1 configuration.
fix_1: VLLM_USE_V1 unset on 7.5: vLLM logs WARNING "Compute Capability < 8.0 is not supported by the V1 Engine.
Falling back to V0." and the configuration is made for V0 (envs.VLLM_USE_V1 false); VLLM_USE_V1=0 too.
fix_2 ("upgrade to 0.10.2 or newer"): vLLM 0.11.0's wheel the same way (its pinned torch 2.8.0, vllm._C and
_vllm_fa2_C loading with a stub CUDA 12.8 driver library; the FA3 and FlashMLA extensions, which run on 9.x only,
are left out of the tree): with VLLM_USE_V1=1 on 7.5 the configuration is made for V1 without the error, and vLLM's
selector then picks FLEX_ATTENTION for an fp16 layer of head size 64 under it. (vLLM 0.10.1.1, the last release the
record gives the check to, pins torch 2.7.1: not run.)"""

from errkb.verify.case import Refuted
from verification.cases import _venv
from verification.cases.vllm import _vllm_v0 as v0

BACKEND = "vllm"
REQUIRES = {"cuda": False}
TIMEOUT = 2400
RELEASE = "0.8.5"
LOGGER = "vllm.engine.arg_utils"


def _engine(ctx, cap, **env):
    got, res = v0.run_code(ctx, RELEASE, v0.ENGINE, cap=cap, extra_env=env)
    v0.described(ctx, RELEASE, got, res, f"create_engine_config() on {cap[0]}.{cap[1]}", extra_env=env,
                 loggers=("vllm.engine",))
    return got, res


def reproduce(ctx):
    got, _ = _engine(ctx, (7, 5), VLLM_USE_V1="1")
    ctx.expect_error(_venv.raise_reported, got)
    got, _ = _engine(ctx, (7, 0), VLLM_USE_V1="1")
    if not (got["raised"] and "Compute Capability < 8.0" in got["raised"][1]):
        raise Refuted(f"7.0 with VLLM_USE_V1=1 did not raise the record's error: {got['raised']}")
    got, _ = _engine(ctx, (8, 0), VLLM_USE_V1="1")
    if got["raised"] or not got["use_v1"]:
        raise Refuted(f"8.0 with VLLM_USE_V1=1 did not get a V1 configuration: {got['raised']}")


def _v0(got):
    _venv.raise_reported(got)
    if got["use_v1"]:
        raise AssertionError("the configuration was made for the V1 engine")


def fix_1(ctx):
    got, res = _engine(ctx, (7, 5))
    ctx.call(_v0, got)
    if not any("Compute Capability < 8.0 is not supported by the V1 Engine. Falling back to V0." in r["msg"]
               for r in v0.records(res) if r["name"] == LOGGER):
        raise Refuted("no fallback warning was logged with VLLM_USE_V1 unset")
    got, _ = _engine(ctx, (7, 5), VLLM_USE_V1="0")
    ctx.call(_v0, got)


def fix_2(ctx):
    v0.v1_flex_before_ampere(ctx)
