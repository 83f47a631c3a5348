"""vLLM's V0-era attention selection (0.6-0.8; 0.11.0 and 0.13.0 where a step checks a newer release) on the CPU,
from the releases' real wheels, for the records
about what the selector, the FlashAttention version lookup and the engine-argument checks of those releases
log or raise ("Cannot use FlashAttention-2 backend ...", "Cannot use FA version N ...", "FlashMLA backend is
not supported ...", "VLLM_USE_V1=1 is not supported with Compute Capability < 8.0" ...).

What runs: a release's PyPI wheel (RELEASES), unpacked (once per run) without the compiled modules no step
calls (RELEASES[...].not_loaded; a step may leave out more, e.g. the FlashAttention extension), put first on
PYTHONPATH of a uv environment holding the torch and xformers the wheel's METADATA pins and the pure-Python
modules `import vllm` needs (RELEASES[...].deps, found by importing one missing module at a time, pinned).
vLLM 0.6.x loads without vllm/_C.abi3.so (its custom ops log that they are missing and go on); 0.7.x and later
import vllm._C at the top of vllm/platforms/cuda.py, so their trees keep it, and it and their FlashAttention
extensions (_vllm_fa2_C, _vllm_fa3_C) and _flashmla_C load here for real next to the pinned torch once a
libcuda.so.1 is there: a stub of the driver of the torch's CUDA release (verification/cases/_driver_stub.py: 12.4
for torch 2.5/2.6, 12.8 for torch 2.8/2.9; said in the notes). Nothing is called on a GPU. A child that stops on a
missing module, or in which vLLM did not take its CUDA platform, ends the step as an error, never a verdict.

Stand-ins, said in every step's notes: these releases decide whether they are on a CUDA GPU, and its compute
capability, through NVML (vllm/platforms/__init__.py and platforms/cuda.py: the `pynvml` module of
nvidia-ml-py in 0.6.x-0.7.x, vLLM's vendored copy vllm.third_party.pynvml from 0.8), and this machine has no GPU, so
the child makes whichever NVML module vLLM imports answer as one device of the step's compute capability
(nvmlInit, nvmlDeviceGetCount, nvmlDeviceGetHandleByIndex, nvmlDeviceGetCudaComputeCapability,
nvmlDeviceGetName), patched right after the module first executes (nvidia-ml-py's is imported first: 0.7.x load
it by file path unless it is already imported). vLLM's own CudaPlatform then answers every
capability question vLLM asks. Where a step says so (torch_cap), torch.cuda.get_device_capability answers the
same capability: the bundled vllm_flash_attn asks torch, not vLLM, which versions this GPU runs. Those answers
are the GPU the record is about (8.9 for an RTX 4090, 7.5 for a T4 ...); every message judged comes from the
release's own code.

The child keeps every record the "vllm" logger tree emits and prints it as `ERRKB-LOG <json>`; the records
are logged again here under their own logger and level, so expect_logged/not_logged judge the release's own
lines.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path

from errkb.verify.case import Refuted
from verification.cases import _abi_wheels as abi
from verification.cases import _builds as b
from verification.cases import _driver_stub
from verification.cases import _venv


@dataclass(frozen=True)
class Release:
    not_loaded: tuple[str, ...]
    deps: tuple[str, ...]
    driver: str | None = None  # CUDA release of the stub libcuda.so.1 the tree's compiled modules need
    xformers: bool = True  # install the xformers the METADATA pins (0.11.0's V1 engine never imports it)


# what `import vllm` (0.6.2) needs besides torch and xformers, pinned; gguf at the wheel's own pin
DEPS = ("numpy==1.26.4", "setuptools==80.9.0", "nvidia-ml-py==13.615.71", "transformers==4.45.2",
        "tokenizers==0.20.3", "psutil==7.2.2", "msgspec==0.23.0", "pydantic==2.14.4", "gguf==0.10.0",
        "sentencepiece==0.2.3", "mistral-common==1.13.1", "py-cpuinfo==9.0.0", "aiohttp==3.14.5",
        "openai==3.63.0", "pyyaml==6.0.4")
# 0.6.3.post1's worker (its quantization configs import compressed_tensors, at the wheel's pin)
DEPS_063 = DEPS + ("compressed-tensors==0.6.0", "cloudpickle==3.1.3")
# 0.7.x/0.8.x: `import vllm`, EngineArgs(...).create_engine_config() with VLLM_USE_V1=1 (V1's imports) and the
# V0 backends' imports; xgrammar and llguidance at the 0.8.5 wheel's pins
DEPS_08 = ("numpy==2.2.6", "setuptools==80.9.0", "transformers==4.51.3", "tokenizers==0.21.4", "pydantic==2.14.4",
           "cachetools==8.0.3", "psutil==7.2.2", "sentencepiece==0.2.3", "requests==2.34.2", "tqdm==4.70.1",
           "blake3==1.0.11", "py-cpuinfo==9.0.0", "protobuf==7.36.2", "msgspec==0.23.0", "pyzmq==27.3.0",
           "cloudpickle==3.1.3", "gguf==0.19.0", "pyyaml==6.0.4", "einops==0.8.2", "partial-json-parser==0.2.1.1.post7",
           "importlib-metadata==10.2.0", "pillow==13.0.0", "fastapi==0.165.0", "openai==3.63.0", "aiohttp==3.14.5",
           "prometheus-client==0.26.0", "llguidance==0.7.30", "xgrammar==0.1.18")
# 0.7.2: its METADATA's numpy<2, gguf==0.10.0 and nvidia-ml-py (0.7.x load NVML from nvidia-ml-py's pynvml.py)
DEPS_07 = tuple(d for d in DEPS_08 if not d.startswith(("numpy==", "gguf=="))) + (
    "numpy==1.26.4", "gguf==0.10.0", "nvidia-ml-py==13.615.71")
# 0.11.0: `import vllm`, the engine configuration (V1) and the model inspection subprocess it starts, with
# transformers at a release of its time (the wheel asks >=4.55.2)
DEPS_011 = ("numpy==2.2.6", "transformers==4.57.6", "pydantic==2.14.4", "cachetools==8.0.3", "cbor2==6.3.0",
            "cloudpickle==3.1.3", "psutil==7.2.2", "regex==2026.12.2", "setproctitle==1.3.8", "pyyaml==6.0.4",
            "pyzmq==27.3.0", "packaging==26.4", "aiohttp==3.14.5", "requests==2.34.2", "blake3==1.0.11",
            "pillow==13.0.0", "fastapi==0.118.0", "starlette==0.48.0", "openai==3.63.0", "openai-harmony==0.0.8",
            "pybase64==1.5.1", "msgspec==0.23.0", "gguf==0.17.1", "py-cpuinfo==9.0.0", "nvidia-ml-py==13.615.71")
RELEASES = {
    "0.6.2": Release(("vllm/_C.abi3.so", "vllm/_moe_C.abi3.so"), DEPS),
    "0.6.3.post1": Release(("vllm/_C.abi3.so", "vllm/_moe_C.abi3.so"), DEPS_063),
    "0.7.2": Release(("vllm/_moe_C.abi3.so",), DEPS_07, driver="12.4"),
    "0.8.5": Release(("vllm/_moe_C.abi3.so",), DEPS_08, driver="12.4"),
    # without the extensions no step of these GPUs loads (FA3 and FlashMLA run on 9.x only), for disk space
    "0.11.0": Release(("vllm/_moe_C.abi3.so", "vllm/vllm_flash_attn/_vllm_fa3_C.abi3.so", "vllm/_flashmla_C.abi3.so",
                       "vllm/_flashmla_extension_C.abi3.so"), DEPS_011, driver="12.8", xformers=False),
    "0.13.0": Release(("vllm/_moe_C.abi3.so", "vllm/_flashmla_C.abi3.so", "vllm/_flashmla_extension_C.abi3.so"),
                      DEPS_011 + ("prometheus-client==0.26.0", "setuptools==80.9.0"), driver="12.8", xformers=False),
}
RELEASE = "0.6.2"
LOGGER = "vllm.attention.selector"
NOT_LOADED = RELEASES[RELEASE].not_loaded
FA_SO = "vllm/vllm_flash_attn/vllm_flash_attn_c.abi3.so"
FA_SOS = ("vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so", "vllm/vllm_flash_attn/_vllm_fa3_C.abi3.so")  # 0.7.x-0.8.x
MARK = "ERRKB-RESULT "
# the attention layer the cases build: a Llama-8B-like layer (32 query heads, 8 KV heads, head size 128)
HEADS = dict(num_heads=32, head_size=128, num_kv_heads=8)
STANDIN_NOTE = ("stand-in: the child made NVML report one CUDA device of compute capability {cap} on this machine "
                "without a GPU (vLLM asks NVML which platform it is on); vLLM's CudaPlatform answered; nothing ran on it")
TORCH_NOTE = ("stand-in: torch.cuda.get_device_capability() answered {cap} too (the bundled vllm_flash_attn asks torch "
              "which FlashAttention versions this GPU runs)")

# The child's first lines: the NVML stand-in, the log keeper and the reporting helpers. ARGS comes from the
# environment (ERRKB_VLLM_ARGS): "cap", "torch_cap" and the step's own arguments. The after-import hook has
# the shape of errkb.verify.pretend's but is written out here: the child runs in the release's own uv
# environment, where errkb is not installed, and patches NVML only (pretend.py also answers torch's queries).
PRELUDE = r'''
import importlib.abc, json, logging, os, sys, traceback
ARGS = json.loads(os.environ["ERRKB_VLLM_ARGS"])
_cap = tuple(ARGS["cap"])
_NVML = {"nvmlInit": lambda: None, "nvmlShutdown": lambda: None, "nvmlDeviceGetCount": lambda: 1,
         "nvmlDeviceGetHandleByIndex": lambda i: i, "nvmlDeviceGetCudaComputeCapability": lambda h: _cap,
         "nvmlDeviceGetName": lambda h: "errkb pretend CUDA device (no GPU)"}
class _NvmlStandIn(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name not in ("pynvml", "vllm.third_party.pynvml"):
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        run = spec.loader.exec_module
        def exec_module(module):
            run(module)
            for n, f in _NVML.items():
                setattr(module, n, f)
        spec.loader.exec_module = exec_module
        return spec
sys.meta_path.insert(0, _NvmlStandIn())
try:
    import pynvml   # 0.7.x load nvidia-ml-py's pynvml.py by file unless it is already imported
except ImportError:
    pass
import torch
if ARGS.get("torch_cap"):
    torch.cuda.get_device_capability = lambda device=None: _cap
class _Keep(logging.Handler):
    def emit(self, r):
        print("ERRKB-LOG " + json.dumps({"name": r.name, "level": r.levelno, "msg": r.getMessage()}), flush=True)
def errkb_keep_logs():
    logging.getLogger("vllm").addHandler(_Keep())   # after vLLM's import, which configures its logger
def errkb_raised(e):
    """[class, message]; a bare AssertionError carries the statement Python prints above it."""
    msg = str(e)
    if isinstance(e, AssertionError) and not msg:
        frames = traceback.extract_tb(e.__traceback__)
        msg = (frames[-1].line or "").strip() if frames else ""
    return [type(e).__name__, msg]
def errkb_report(value):
    print(%r + json.dumps(value), flush=True)
def errkb_tiny_llama(dtype):
    """A folder holding a two-layer Llama config.json (no weights, no tokenizer): enough for vLLM's
    engine configuration and worker set-up."""
    import tempfile
    folder = tempfile.mkdtemp()
    json.dump({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 256,
               "intermediate_size": 512, "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 2,
               "vocab_size": 1024, "max_position_embeddings": 2048, "torch_dtype": dtype},
              open(os.path.join(folder, "config.json"), "w"))
    return folder
def errkb_platform(out):
    import vllm
    import vllm.platforms as platforms
    errkb_keep_logs()
    out.update(vllm=vllm.__version__, platform=type(platforms.current_platform).__name__,
               capability=list(platforms.current_platform.get_device_capability() or ()))
''' % MARK

# vLLM's own Attention layer (as every model's attention module builds it) under a CacheConfig carrying the
# KV-cache dtype, with torch's default dtype set as model loading sets it; or `import vllm.vllm_flash_attn`
# (mode 'import-fa'); or the head-size lists (mode 'lists')
LAYER = r'''
out = {"torch": torch.__version__, "vllm": None, "platform": None, "capability": None, "raised": None}
try:
    errkb_platform(out)
    if ARGS["mode"] == "import-fa":
        import vllm.vllm_flash_attn as fa
        out["fa"] = fa.__version__
    elif ARGS["mode"] == "lists":
        from vllm.attention.backends.flash_attn import FlashAttentionBackend
        from vllm.attention.ops.paged_attn import PagedAttention
        out["lists"] = {"FlashAttentionBackend": FlashAttentionBackend.get_supported_head_sizes(),
                        "PagedAttention": PagedAttention.get_supported_head_sizes()}
    else:
        from vllm.attention import Attention
        from vllm.config import CacheConfig
        torch.set_default_dtype(getattr(torch, ARGS["dtype"]))
        cache = CacheConfig(block_size=16, gpu_memory_utilization=0.9, swap_space=0, cache_dtype=ARGS["kv_cache_dtype"])
        layer = Attention(ARGS["num_heads"], ARGS["head_size"], ARGS["head_size"] ** -0.5,
                          num_kv_heads=ARGS["num_kv_heads"], cache_config=cache)
        out["impl"] = type(layer.impl).__name__
        out["impl_attrs"] = {k: getattr(layer.impl, k, None) for k in ARGS.get("impl_attrs", ())}
except BaseException as e:
    out["raised"] = errkb_raised(e)
errkb_report(out)
'''

# `vllm serve <folder>` as far as the engine configuration: EngineArgs(...).create_engine_config() on a two-layer
# Llama config.json written to a temporary folder (no tokenizer, no download); with ARGS["select_v1"] (0.10+) then
# the attention selector for one layer under that configuration
ENGINE = r'''
out = {"torch": torch.__version__, "vllm": None, "platform": None, "capability": None, "raised": None}
try:
    errkb_platform(out)
    folder = errkb_tiny_llama("float16")
    from vllm.engine.arg_utils import EngineArgs
    import vllm.envs as envs
    cfg = EngineArgs(model=folder, skip_tokenizer_init=True, **ARGS.get("engine", {})).create_engine_config()
    out["use_v1"] = bool(envs.VLLM_USE_V1)
    if ARGS.get("select_v1"):   # 0.10+: then the selector for one fp16 layer of head size 64, as V1's runner asks it
        from vllm.config import set_current_vllm_config
        from vllm.attention.selector import get_attn_backend
        with set_current_vllm_config(cfg):
            backend = get_attn_backend(64, torch.float16, "auto", 16)
        out["backend"] = [backend.get_name(), backend.__module__ + "." + backend.__name__]
except BaseException as e:
    out["raised"] = errkb_raised(e)
out["VLLM_USE_V1 after"] = os.environ.get("VLLM_USE_V1")
errkb_report(out)
'''

# vllm.attention.selector.get_attn_backend as the model runner calls it (ARGS["select"]: head_size, dtype,
# kv_cache_dtype, block_size, use_mla)
SELECT = r'''
out = {"torch": torch.__version__, "vllm": None, "platform": None, "capability": None, "raised": None}
try:
    errkb_platform(out)
    from vllm.attention.selector import get_attn_backend
    s = ARGS["select"]
    backend = get_attn_backend(s["head_size"], getattr(torch, s["dtype"]), s["kv_cache_dtype"], s["block_size"], False,
                               use_mla=s["use_mla"])
    out["backend"] = [backend.get_name(), backend.__module__ + "." + backend.__name__]
except BaseException as e:
    out["raised"] = errkb_raised(e)
errkb_report(out)
'''


def pins(ctx, release: str = RELEASE) -> list[str]:
    """torch and xformers as the release's METADATA pins them."""
    got = abi.requires(ctx, "vllm", release, "torch")
    xformers = abi.requires(ctx, "vllm", release, "xformers")
    got += xformers if RELEASES[release].xformers else []
    note = f"vllm {release}'s METADATA pins {got + ([] if RELEASES[release].xformers else xformers)}" + (
        "" if RELEASES[release].xformers or not xformers else f" ({', '.join(xformers)} not installed: no step imports it)")
    if note not in ctx.notes:
        ctx.note(note)
    return got


def release_tree(ctx, release: str, drop=()):
    """The release's wheel unpacked into a folder of its own, without its not_loaded modules and `drop` (a
    tree with `drop` is the full one hard-linked, less those files)."""
    skip = set(RELEASES[release].not_loaded) | set(drop)
    wheel = abi.wheel_file(ctx, "vllm", release)
    dest = _venv._tmp_root() / f"vllm-{release}-{hashlib.sha1(repr(sorted(skip)).encode()).hexdigest()[:10]}"
    stamp = dest / ".errkb-unpacked"
    if not (stamp.is_file() and stamp.read_text() == repr(sorted(skip))):
        if drop:
            full = release_tree(ctx, release)
            shutil.rmtree(dest, ignore_errors=True)
            shutil.copytree(full, dest, copy_function=os.link,
                            ignore=lambda d, names: [n for n in names if (Path(d) / n).relative_to(full).as_posix() in skip
                                                     or n == ".errkb-unpacked"])
        else:
            with zipfile.ZipFile(wheel) as z:
                z.extractall(dest, [n for n in z.namelist() if n not in skip])
        stamp.write_text(repr(sorted(skip)))
    note = f"{wheel.name} unpacked without {', '.join(sorted(skip))}"
    if note not in ctx.notes:
        ctx.note(note)
    return dest


def tree(ctx, *, with_fa: bool = True):
    """0.6.2's tree, without FA_SO unless with_fa."""
    return release_tree(ctx, RELEASE, () if with_fa else (FA_SO,))


def env(ctx, torch: str | None = None, release: str = RELEASE) -> _venv.Venv:
    """uv environment: the release's pinned torch and xformers with its deps, or `torch` (another release,
    without xformers) with them."""
    reqs = pins(ctx, release) if torch is None else [torch]
    _, target = b.uv_env(ctx, "vllm-" + release + "-" + "-".join(r.replace("==", "") for r in reqs),
                         *reqs, *RELEASES[release].deps)
    return target


def run_code(ctx, release: str, body: str, *, cap=(9, 0), torch_cap: bool = False, drop=(), torch: str | None = None,
             extra_env=None, **args) -> tuple[dict, _venv.Run]:
    """PRELUDE + `body` in the release's environment and tree (without `drop`), NVML answering `cap`
    (and torch too with torch_cap), `args` in ARGS, `extra_env` (VLLM_* variables) set. Returns (what it
    reported, the run)."""
    target = env(ctx, torch, release)
    extra = dict(VIRTUAL_ENV=str(target.path), PYTHONPATH=str(release_tree(ctx, release, drop)), HF_HUB_OFFLINE="1",
                 ERRKB_VLLM_ARGS=json.dumps({"cap": list(cap), "torch_cap": torch_cap, **args}), **(extra_env or {}))
    if RELEASES[release].driver:
        extra["LD_LIBRARY_PATH"] = str(_driver_stub.libcuda(ctx, RELEASES[release].driver))
    res = _venv.run([target.python, "-c", PRELUDE + body], env=_venv.tool_env(**extra), cwd=_venv._tmp_root(), timeout=900)
    got = _venv.reported(res, MARK)
    if got.get("platform") is not None and "Cuda" not in got["platform"]:
        raise RuntimeError(f"vLLM {release} did not take its CUDA platform with the NVML stand-in: {got['platform']}")
    if got.get("raised") and got["raised"][0] == "ModuleNotFoundError":
        raise RuntimeError(f"vLLM {release}'s child misses a module in this environment: {got['raised'][1]}")
    for note in (STANDIN_NOTE, *((TORCH_NOTE,) if torch_cap else ())):
        note = note.format(cap="%d.%d" % tuple(cap))
        if note not in ctx.notes:
            ctx.note(note)
    return got, res


def run(ctx, *, mode: str = "layer", with_fa: bool = True, torch: str | None = None, cap=(9, 0), extra_env=None,
        **layer) -> tuple[dict, _venv.Run]:
    """One 0.6.2 child: vLLM's Attention layer built with `layer` (dtype, kv_cache_dtype, num_heads, head_size,
    num_kv_heads), `import vllm.vllm_flash_attn` (mode 'import-fa'), or the head-size lists of the
    FlashAttention backend and of PagedAttention, which xFormers' implementation checks (mode 'lists').
    Returns (what it reported, the run)."""
    got, res = run_code(ctx, RELEASE, LAYER, cap=cap, drop=() if with_fa else (FA_SO,), torch=torch,
                        extra_env=extra_env, mode=mode, **layer)
    what = {"layer": ", ".join(f"{k}={v}" for k, v in layer.items()), "import-fa": "import vllm.vllm_flash_attn",
            "lists": "head-size lists"}[mode]
    ctx.note(f"vllm.__version__ {got['vllm']!r}, torch {got['torch']}, platform {got['platform']} {tuple(got['capability'] or ())}, "
             f"{'with' if with_fa else 'without'} {FA_SO.rsplit('/', 1)[1]}"
             + (f", {extra_env}" if extra_env else "") + f": {what} -> "
             + (f"{got['raised'][0]}: {got['raised'][1][:200]}" if got["raised"] else str(got.get("impl") or got.get("lists") or f"vllm_flash_attn {got.get('fa')}"))
             + f"; selector logged {[r['msg'][:90] for r in records(res) if r['name'] == LOGGER]}")
    return got, res


def v1_flex_before_ampere(ctx) -> None:
    """vLLM 0.11.0 on a compute capability 7.5 GPU with VLLM_USE_V1=1: V1 runs, its selector picks
    FLEX_ATTENTION (the fix the pre-Ampere V1 records name: a release whose V1 engine takes Turing)."""
    got, res = run_code(ctx, "0.11.0", ENGINE, cap=(7, 5), extra_env={"VLLM_USE_V1": "1"}, select_v1=True)
    described(ctx, "0.11.0", got, res, "create_engine_config() on 7.5, then the selector", extra_env={"VLLM_USE_V1": "1"},
              loggers=("vllm.engine", "vllm.platforms"))
    ctx.call(_venv.raise_reported, got)
    if not got["use_v1"] or got["backend"][0] != "FLEX_ATTENTION":
        raise Refuted(f"vLLM 0.11.0 on 7.5: V1 {got['use_v1']}, backend {got['backend']}")


def described(ctx, release: str, got: dict, res: _venv.Run, what: str, extra_env=None, loggers=("vllm",)) -> None:
    """A note of one child's run: release, torch, platform and capability, what it did, what it gave, and
    what the loggers under `loggers` logged at INFO or above."""
    result = (f"{got['raised'][0]}: {got['raised'][1][:240]}" if got["raised"] else
              ", ".join(f"{k}={got[k]}" for k in ("impl", "impl_attrs", "backend", "use_v1") if k in got) or "returned")
    logged = [f"{logging.getLevelName(r['level'])} {r['msg'][:120]}" for r in records(res)
              if r["level"] >= logging.INFO and r["name"].startswith(loggers) and not r["msg"].startswith("Automatically detected")]
    ctx.note(f"vllm {got['vllm']} ({release}), torch {got['torch']}, {got['platform']} {tuple(got['capability'] or ())}"
             + (f", {extra_env}" if extra_env else "") + f": {what} -> {result}; logged {logged}")


def records(res: _venv.Run) -> list[dict]:
    return [json.loads(line[len("ERRKB-LOG "):]) for line in res.output.splitlines() if line.startswith("ERRKB-LOG ")]


def relog(res: _venv.Run) -> None:
    """The child's log records, logged again here under their own logger and level."""
    for r in records(res):
        logging.getLogger(r["name"]).log(r["level"], r["msg"])


def expect_line(ctx, res: _venv.Run, logger: str = LOGGER, level: int = logging.INFO) -> None:
    """The reproduce check: the line matching the record's template, on `logger` at `level`."""
    ctx.expect_logged(logger, relog, res, level=level)


def built(got: dict, impl: str) -> None:
    """A claimed-good child: the layer was built with implementation `impl` (else what it raised, or
    an AssertionError naming what it built)."""
    _venv.raise_reported(got)
    if got.get("impl") != impl:
        raise AssertionError(f"the layer was built with {got.get('impl')}, not {impl}")


def quiet(ctx, got: dict, res: _venv.Run, impl: str, logger: str = LOGGER) -> None:
    """A fix or control: the record's line is not logged, and the layer is built with `impl`."""
    ctx.not_logged(logger, relog, res)
    ctx.call(built, got, impl)
