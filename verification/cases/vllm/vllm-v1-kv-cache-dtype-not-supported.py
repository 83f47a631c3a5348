"""vLLM 0.8.x with VLLM_USE_V1=1 and a quantized KV cache: "VLLM_USE_V1=1 is not supported with
--kv-cache-dtype".

Run with the release's own Python files on the CPU (verification/cases/vllm/_vllm_releases.py: no compiled
library is loaded, torch 2.13.0+cpu): the command line `vllm serve <model> --kv-cache-dtype fp8` goes
through vLLM's own argument parser (EngineArgs.add_cli_args, from_cli_args) and
EngineArgs.create_engine_config(), where vLLM 0.8.x asks EngineArgs._is_v1_supported_oracle whether V1 can
run the configuration. The model is a two-layer Llama config.json written to a temporary folder. With no
GPU vLLM finds no platform, so the command line adds `--device cpu` (DeviceConfig otherwise stops first on
"Failed to infer device type"); 0.8.1's oracle asks the platform nothing else before the KV-cache test
except whether a CUDA GPU is below compute capability 8.0, so an A100 user meets the same branch.

vLLM 0.8.1 imports more of its serving stack than the 0.11+ releases _vllm_releases.DEPS were found for:
EXTRA pins those modules (found by importing one missing module at a time), `--no-deps --target`.

Reproduce: vLLM 0.8.1 (the record: 0.8.0 and 0.8.1 accept no quantized KV cache at all) with
VLLM_USE_V1=1 raises the record's NotImplementedError. (0.8.5's Python files do not import next to
torch 2.13: its Triton placeholder lacks what torch's inductor imports, so 0.8.2-0.10.2 are not run.)
Fix 1: VLLM_USE_V1 unset: the same command logs '--kv-cache-dtype is not supported by the V1 Engine.
Falling back to V0.' and vLLM chooses V0 (VLLM_USE_V1 becomes 0); VLLM_USE_V1=0 skips the test. Either
run then stops on this machine's missing platform when VllmConfig asks it a V0 question (noted; no part
of the claim). Fix 2 needs a Hopper GPU. Fix 3 (a newer release) depends on the GPU's backend at run time:
skipped. Fix 4: the command without --kv-cache-dtype, VLLM_USE_V1=1: the oracle passes the KV-cache test
and goes on to its later device-type test, which refuses this machine's missing platform ('device
type='; a CUDA GPU passes it): the step checks that order in 0.8.1's arg_utils.py and confirms on it."""

import json

from errkb.verify.case import Refuted
from verification.cases import _builds as b
from verification.cases.vllm import _vllm_releases as rel

BACKEND = "vllm"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
RELEASE = "0.8.1"
EXTRA = ("fastapi==0.115.12", "starlette==0.46.2", "openai==1.76.0", "xgrammar==0.1.18", "anyio==4.16.0",
         "httpx==0.29.0", "sniffio==1.3.1", "distro==1.9.0", "jiter==0.19.0", "prometheus_client==0.26.0",
         "llguidance==1.9.1", "sentencepiece==0.2.3", "tiktoken==0.14.0")

CODE = r'''
import json, logging, os, tempfile
for k, v in ENV.items():
    if v is None:
        os.environ.pop(k, None)
    else:
        os.environ[k] = v
folder = tempfile.mkdtemp()
json.dump({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 256,
           "intermediate_size": 512, "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 2,
           "vocab_size": 1024, "max_position_embeddings": 2048, "torch_dtype": "bfloat16"},
          open(os.path.join(folder, "config.json"), "w"))
from vllm.engine.arg_utils import EngineArgs
from vllm.utils import FlexibleArgumentParser
import vllm, vllm.envs as envs
from vllm.platforms import current_platform
logged = []
class Keep(logging.Handler):  # after vLLM's import, which configures its "vllm" logger
    def emit(self, record):
        logged.append([record.levelname, record.getMessage()[:400]])
logging.getLogger("vllm").addHandler(Keep())
parser = EngineArgs.add_cli_args(FlexibleArgumentParser())
args = parser.parse_args(["--model", folder] + ARGV)
info = {"vllm": vllm.__version__, "platform": type(current_platform).__name__,
        "VLLM_USE_V1 set": envs.is_set("VLLM_USE_V1")}
try:
    EngineArgs.from_cli_args(args).create_engine_config()
    info["raised"] = None
except BaseException as exc:
    info["raised"] = errkb_raised(exc)
info["VLLM_USE_V1 after"] = os.environ.get("VLLM_USE_V1")
info["logged"] = [l for l in logged if l[0] in ("WARNING", "ERROR")]
errkb_report(info)
'''
FP8 = ["--kv-cache-dtype", "fp8", "--device", "cpu"]


def extra(ctx) -> str:
    folder = b.pip_target(ctx, "target-vllm-0.8-serving-deps", "--no-deps", *EXTRA, env=rel.env(ctx),
                          what="vLLM 0.8.1's serving imports")
    note = "with " + " ".join(EXTRA) + " (--no-deps --target)"
    if note not in ctx.notes:
        ctx.note(note)
    return str(folder)


def serve(ctx, argv: list[str], v1: str | None, release: str = RELEASE) -> dict:
    code = f"ENV = {{'VLLM_USE_V1': {v1!r}}}\nARGV = {argv!r}\n" + CODE
    got = rel.run(ctx, release, code, path=[extra(ctx)])
    ctx.note(f"vllm {got['vllm']} ({got['platform']}), VLLM_USE_V1={v1 if v1 is not None else '(unset)'}, "
             f"`vllm serve <model> {' '.join(argv)}`: "
             + (f"{got['raised']['class']}: {got['raised']['message'][:200]}" if got["raised"] else "engine config made")
             + f"; VLLM_USE_V1 afterwards: {got['VLLM_USE_V1 after']}; warnings: {json.dumps(got['logged'])[:400]}")
    return got


def reproduce(ctx):
    got = serve(ctx, FP8, "1")
    ctx.expect_error(rel.raise_statement, got["raised"])


def _no_record_error(got: dict) -> None:
    if got["raised"] and "is not supported with --kv-cache-dtype" in got["raised"]["message"]:
        rel.raise_statement(got["raised"])


def fix_1(ctx):
    unset = serve(ctx, FP8, None)
    off = serve(ctx, FP8, "0")

    def falls_back_to_v0():
        for got in (unset, off):
            _no_record_error(got)
        if not any("--kv-cache-dtype is not supported by the V1 Engine. Falling back to V0." in m for _, m in unset["logged"]):
            raise AssertionError(f"no fallback warning: {unset['logged']}")
        if unset["VLLM_USE_V1 after"] != "0":
            raise AssertionError(f"vLLM did not choose V0: VLLM_USE_V1={unset['VLLM_USE_V1 after']}")
        for got in (unset, off):
            if got["raised"]:
                where = f"{got['raised']['file'].split('/vllm/', 1)[-1]}:{got['raised']['line']}"
                ctx.note(f"after the engine choice the CPU run stopped on {got['raised']['class']} at vllm/{where} "
                         f"({got['raised']['source'][:80]!r}): no part of the claim, vLLM 0.8.1 has no platform here")

    ctx.call(falls_back_to_v0)


def fix_2(ctx):
    ctx.skip("needs a Hopper GPU (FlashAttention 3 on compute capability 9.x)")


def fix_3(ctx):
    ctx.skip("whether a newer release's V1 backend holds an fp8 cache is decided by the GPU and backend at run time")


def _oracle_order(ctx) -> tuple[int, int]:
    """Lines of 0.8.1's KV-cache test and of its device-type test in EngineArgs._is_v1_supported_oracle."""
    text = (rel.release(ctx, RELEASE) / "vllm" / "engine" / "arg_utils.py").read_text().splitlines()
    kv = next(i for i, ln in enumerate(text, 1) if 'feature_name="--kv-cache-dtype"' in ln)
    device = next(i for i, ln in enumerate(text, 1) if 'feature_name=f"device type=' in ln)
    return kv, device


def fix_4(ctx):
    got = serve(ctx, ["--device", "cpu"], "1")
    kv, device = _oracle_order(ctx)

    def passes_the_test():
        _no_record_error(got)
        raised = got["raised"]
        if raised and raised["class"] == "NotImplementedError" and "VLLM_USE_V1=1" in raised["message"]:
            if "device type=" not in raised["message"] or device < kv:
                raise Refuted(f"V1 refused another feature: {raised['message']}")
            ctx.note(f"the oracle passed its KV-cache test (arg_utils.py line {kv}) and stopped at its device-type "
                     f"test (line {device}), on this machine's missing platform: {raised['message']}")
        elif raised:
            ctx.note(f"past the V1 test the CPU run stopped on {raised['class']} (no part of the claim)")

    ctx.call(passes_the_test)
