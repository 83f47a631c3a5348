"""vLLM 0.6.2's V0 attention selection on the CPU, for the records about its INFO lines
"Cannot use FlashAttention-2 backend ..." (vllm/attention/selector.py, which_attn_to_use).

What runs: vLLM 0.6.2's PyPI wheel, unpacked (once per run) without vllm/_C.abi3.so and
vllm/_moe_C.abi3.so (custom ops no step calls; vLLM logs that vllm._C is missing and goes on), with or
without its compiled FlashAttention module vllm/vllm_flash_attn/vllm_flash_attn_c.abi3.so (which needs
torch's libraries and libcudart.so.12 only, so it loads here), put first on PYTHONPATH of a uv
environment holding the torch and xformers the wheel's METADATA pins (torch==2.4.0 with its CUDA 12.1
libraries, xformers==0.0.27.post2) and the pure-Python modules `import vllm` needs (DEPS, found by
importing one missing module at a time). Each step builds vLLM's own Attention layer
(vllm.attention.Attention, as every model's attention module does) under a CacheConfig carrying the
KV-cache dtype, with torch's default dtype set as model loading sets it; Attention.__init__ calls
get_attn_backend, which logs the record's line, then builds the chosen backend's implementation.

Stand-in, said in every step's notes: vLLM 0.6.2 decides whether it is on a CUDA GPU, and its compute
capability, through NVML (vllm/platforms/__init__.py and platforms/cuda.py), and this machine has no
GPU, so before vLLM is imported the child makes pynvml (nvidia-ml-py) answer as one device of
capability 9.0 would (nvmlInit, nvmlDeviceGetCount, nvmlDeviceGetHandleByIndex,
nvmlDeviceGetCudaComputeCapability, nvmlDeviceGetName). vLLM's own CudaPlatform then answers the
selector; nothing runs on the device. The capability only gates the sm80 check that comes before
the lines these records are about.

The child keeps every record the "vllm" logger tree emits and prints it as `ERRKB-LOG <json>`; the
records are logged again here under their own logger and level, so expect_logged/not_logged judge
vllm.attention.selector's own line.
"""

from __future__ import annotations

import json
import logging
import zipfile

from verification.cases import _abi_wheels as abi
from verification.cases import _builds as b
from verification.cases import _venv

RELEASE = "0.6.2"
LOGGER = "vllm.attention.selector"
NOT_LOADED = ("vllm/_C.abi3.so", "vllm/_moe_C.abi3.so")
FA_SO = "vllm/vllm_flash_attn/vllm_flash_attn_c.abi3.so"
# what `import vllm` (0.6.2) needs besides torch and xformers, pinned; gguf at the wheel's own pin
DEPS = ("numpy==1.26.4", "setuptools==80.9.0", "nvidia-ml-py==13.615.71", "transformers==4.45.2",
        "tokenizers==0.20.3", "psutil==7.2.2", "msgspec==0.23.0", "pydantic==2.14.4", "gguf==0.10.0",
        "sentencepiece==0.2.3", "mistral-common==1.13.1", "py-cpuinfo==9.0.0", "aiohttp==3.14.5",
        "openai==3.63.0", "pyyaml==6.0.4")
MARK = "ERRKB-RESULT "
STANDIN_NOTE = ("stand-in: the child made pynvml report one CUDA device of compute capability {cap} on this machine "
                "without a GPU (vLLM 0.6.2 asks NVML which platform it is on); vLLM's CudaPlatform answered; nothing ran on it")

CHILD = r'''
import json, logging, sys
ARGS = json.loads(sys.argv[1])
import pynvml
_cap = tuple(ARGS["cap"])
for _n, _f in {"nvmlInit": lambda: None, "nvmlShutdown": lambda: None, "nvmlDeviceGetCount": lambda: 1,
               "nvmlDeviceGetHandleByIndex": lambda i: i, "nvmlDeviceGetCudaComputeCapability": lambda h: _cap,
               "nvmlDeviceGetName": lambda h: "errkb pretend CUDA device (no GPU)"}.items():
    setattr(pynvml, _n, _f)
class _Keep(logging.Handler):
    def emit(self, r):
        print("ERRKB-LOG " + json.dumps({"name": r.name, "level": r.levelno, "msg": r.getMessage()}), flush=True)
import torch
out = {"torch": torch.__version__, "vllm": None, "platform": None, "capability": None, "raised": None}
try:
    import vllm
    import vllm.platforms as platforms
    logging.getLogger("vllm").addHandler(_Keep())   # after vLLM's import, which configures its logger
    out.update(vllm=vllm.__version__, platform=type(platforms.current_platform).__name__,
               capability=list(platforms.current_platform.get_device_capability()))
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
except BaseException as e:
    out["raised"] = [type(e).__name__, str(e)]
print(%r + json.dumps(out), flush=True)
''' % MARK


def pins(ctx) -> list[str]:
    """torch and xformers as the release's METADATA pins them."""
    got = abi.requires(ctx, "vllm", RELEASE, "torch") + abi.requires(ctx, "vllm", RELEASE, "xformers")
    note = f"vllm {RELEASE}'s METADATA pins {got}"
    if note not in ctx.notes:
        ctx.note(note)
    return got


def tree(ctx, *, with_fa: bool = True):
    """The release's wheel unpacked into a folder of its own, without NOT_LOADED (and without FA_SO unless
    with_fa)."""
    skip = set(NOT_LOADED) | (set() if with_fa else {FA_SO})
    wheel = abi.wheel_file(ctx, "vllm", RELEASE)
    dest = _venv._tmp_root() / f"vllm-{RELEASE}-{'with' if with_fa else 'without'}-fa"
    stamp = dest / ".errkb-unpacked"
    if not stamp.is_file():
        with zipfile.ZipFile(wheel) as z:
            z.extractall(dest, [n for n in z.namelist() if n not in skip])
        stamp.write_text(repr(sorted(skip)))
    note = f"{wheel.name} unpacked without {', '.join(sorted(skip))}"
    if note not in ctx.notes:
        ctx.note(note)
    return dest


def env(ctx, torch: str | None = None) -> _venv.Venv:
    """uv environment: the release's pinned torch and xformers with DEPS, or `torch` (another release,
    without xformers, whose wheel pins torch 2.4.0) with DEPS."""
    reqs = pins(ctx) if torch is None else [torch]
    _, target = b.uv_env(ctx, "vllm-" + RELEASE + "-" + "-".join(r.replace("==", "") for r in reqs), *reqs, *DEPS)
    return target


def run(ctx, *, mode: str = "layer", with_fa: bool = True, torch: str | None = None, cap=(9, 0), extra_env=None,
        **layer) -> tuple[dict, _venv.Run]:
    """One child: vLLM's Attention layer built with `layer` (dtype, kv_cache_dtype, num_heads, head_size,
    num_kv_heads), `import vllm.vllm_flash_attn` (mode 'import-fa'), or the head-size lists of the
    FlashAttention backend and of PagedAttention, which xFormers' implementation checks (mode 'lists').
    Returns (what it reported, the run)."""
    target = env(ctx, torch)
    args = {"mode": mode, "cap": list(cap), **layer}
    res = _venv.run([target.python, "-c", CHILD, json.dumps(args)],
                    env=_venv.tool_env(VIRTUAL_ENV=str(target.path), PYTHONPATH=str(tree(ctx, with_fa=with_fa)),
                                       **(extra_env or {})),
                    cwd=_venv._tmp_root(), timeout=600)
    got = _venv.reported(res, MARK)
    note = STANDIN_NOTE.format(cap="%d.%d" % tuple(cap))
    if note not in ctx.notes:
        ctx.note(note)
    what = {"layer": ", ".join(f"{k}={v}" for k, v in layer.items()), "import-fa": "import vllm.vllm_flash_attn",
            "lists": "head-size lists"}[mode]
    ctx.note(f"vllm.__version__ {got['vllm']!r}, torch {got['torch']}, platform {got['platform']} {tuple(got['capability'] or ())}, "
             f"{'with' if with_fa else 'without'} {FA_SO.rsplit('/', 1)[1]}"
             + (f", {extra_env}" if extra_env else "") + f": {what} -> "
             + (f"{got['raised'][0]}: {got['raised'][1][:200]}" if got["raised"] else str(got.get("impl") or got.get("lists") or f"vllm_flash_attn {got.get('fa')}"))
             + f"; selector logged {[r['msg'][:90] for r in records(res) if r['name'] == LOGGER]}")
    return got, res


def records(res: _venv.Run) -> list[dict]:
    return [json.loads(line[len("ERRKB-LOG "):]) for line in res.output.splitlines() if line.startswith("ERRKB-LOG ")]


def relog(res: _venv.Run) -> None:
    """The child's log records, logged again here under their own logger and level."""
    for r in records(res):
        logging.getLogger(r["name"]).log(r["level"], r["msg"])


def expect_line(ctx, res: _venv.Run) -> None:
    """The reproduce check: the selector's INFO line matching the record's template."""
    ctx.expect_logged(LOGGER, relog, res, level=logging.INFO)


def built(got: dict, impl: str) -> None:
    """A claimed-good child: the layer was built with implementation `impl` (else what it raised, or
    an AssertionError naming what it built)."""
    _venv.raise_reported(got)
    if got.get("impl") != impl:
        raise AssertionError(f"the layer was built with {got.get('impl')}, not {impl}")


def quiet(ctx, got: dict, res: _venv.Run, impl: str) -> None:
    """A fix or control: the record's line is not logged, and the layer is built with `impl`."""
    ctx.not_logged(LOGGER, relog, res)
    ctx.call(built, got, impl)
