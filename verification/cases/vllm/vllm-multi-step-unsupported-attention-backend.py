"""vLLM 0.6.3.post1 (V0 engine), `--num-scheduler-steps 8` with a float32 model: the selector falls back to
xFormers and MultiStepModelRunner's constructor raises ValueError "Multi-Step not supported for attention backend:
xformers. Set VLLM_ATTENTION_BACKEND to a value from ['flash-attn', 'rocm-flash-attn', 'flashinfer']."

On the CPU with vLLM 0.6.3.post1's wheel and its pinned torch 2.4.0 and xformers 0.0.27.post2
(verification/cases/vllm/_vllm_v0.py: the tree without vllm/_C.abi3.so and vllm/_moe_C.abi3.so, whose ops no step
calls; its compiled FlashAttention module loads; NVML answers as one SM90 device, noted). Each step runs `vllm serve
<folder> ...` as far as the worker: EngineArgs(model=<a two-layer Llama config.json, torch_dtype float32, in a
temporary folder>, skip_tokenizer_init=True, ...).create_engine_config(), then vLLM's own GPUExecutor creating its
driver worker exactly as GPUExecutor._init_executor does (_create_worker(): MultiStepWorker when the scheduler is
multi-step, which wraps the model runner in MultiStepModelRunner); the executor's next calls, init_device() and
load_model(), need the GPU and are left out (a subclass's _init_executor stops after _create_worker, noted).

reproduce: dtype float32, num_scheduler_steps 8: the selector's "Cannot use FlashAttention-2 backend for dtype
other than ..." line, then the record's ValueError.
fix_1: the same without --num-scheduler-steps (1): the worker is created (ModelRunner on xFormers).
fix_2: dtype bfloat16 with VLLM_ATTENTION_BACKEND=FLASH_ATTN (the upper-case value): the worker is created with
MultiStepModelRunner on flash-attn. The lower-case value the message lists (VLLM_ATTENTION_BACKEND=flash-attn,
the fix's "before") is run too and what it does is noted."""

from errkb.verify.case import Refuted
from verification.cases import _venv
from verification.cases.vllm import _vllm_v0 as v0

BACKEND = "vllm"
REQUIRES = {"cuda": False}
TIMEOUT = 2400
RELEASE = "0.6.3.post1"
NOTE = ("the executor is vLLM's GPUExecutor with _init_executor stopping after self._create_worker() (init_device() "
        "and load_model(), which need the GPU, are not run)")

WORKER = r'''
out = {"torch": torch.__version__, "vllm": None, "platform": None, "capability": None, "raised": None}
try:
    errkb_platform(out)
    folder = errkb_tiny_llama("float32")
    from vllm.engine.arg_utils import EngineArgs
    from vllm.executor.gpu_executor import GPUExecutor
    cfg = EngineArgs(model=folder, skip_tokenizer_init=True, **ARGS["engine"]).create_engine_config()
    class UpToWorker(GPUExecutor):
        def _init_executor(self):
            self.driver_worker = self._create_worker()
    keys = ("model_config", "cache_config", "parallel_config", "scheduler_config", "device_config", "load_config",
            "lora_config", "speculative_config", "prompt_adapter_config", "observability_config")
    ex = UpToWorker(**{k: getattr(cfg, k) for k in keys})
    runner = ex.driver_worker.model_runner
    out["worker"] = type(ex.driver_worker).__name__
    out["impl"] = type(runner).__name__
    out["backend"] = [runner.attn_backend.get_name(), runner.attn_backend.__name__]
except BaseException as e:
    out["raised"] = errkb_raised(e)
errkb_report(out)
'''


def _worker(ctx, engine, **env):
    got, res = v0.run_code(ctx, RELEASE, WORKER, cap=(9, 0), extra_env=env, engine=engine)
    if NOTE not in ctx.notes:
        ctx.note(NOTE)
    v0.described(ctx, RELEASE, got, res, f"worker for {engine}", extra_env=env,
                 loggers=("vllm.attention", "vllm.worker", "vllm.platforms"))
    return got


def _created(got, runner, backend):
    _venv.raise_reported(got)
    if got["impl"] != runner or got["backend"][0] != backend:
        raise AssertionError(f"the worker has {got['impl']} on {got['backend']}, not {runner} on {backend}")


def reproduce(ctx):
    got = _worker(ctx, {"dtype": "float32", "num_scheduler_steps": 8})
    ctx.expect_error(_venv.raise_reported, got)


def fix_1(ctx):
    got = _worker(ctx, {"dtype": "float32"})
    ctx.call(_created, got, "ModelRunner", "xformers")


def fix_2(ctx):
    engine = {"dtype": "bfloat16", "num_scheduler_steps": 8}
    got = _worker(ctx, engine, VLLM_ATTENTION_BACKEND="FLASH_ATTN")
    ctx.call(_created, got, "MultiStepModelRunner", "flash-attn")
    before = _worker(ctx, engine, VLLM_ATTENTION_BACKEND="flash-attn")
    if before["raised"] is None:
        raise Refuted("VLLM_ATTENTION_BACKEND=flash-attn (the value the message lists) was accepted; "
                      "the record says the variable takes the upper-case names")
