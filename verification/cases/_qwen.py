"""The first Qwen generation's remote modeling code (modeling_qwen.py and the files it imports), loaded
with `from_pretrained(..., trust_remote_code=True)` from a tiny checkpoint folder made in code, in a child
process: the situation of the records whose message Qwen's `_import_flash_attn()` logs.

The Hugging Face Hub, where Qwen-7B-Chat's copy lives, is out of reach here; QwenLM/Qwen-Audio keeps the same
code (the file the records cite) in its GitHub tree, exported from a local clone at 0b0e882e
(verification/cases/_downstream.py). Nothing of it is committed.

The child writes the four Python files and the mel filter bank audio.py reads, a config.json made from Qwen-Audio's own (sizes cut down: 2 layers of
width 64, a one-layer audio encoder of width 32, a vocabulary of 256) and weights saved from the same model
built with flash attention off, into one folder, with an empty cpp_kernels.py: the Hub checkpoints ship that file (it compiles CUDA kernels for
the quantised KV cache) and Qwen-Audio's GitHub tree does not; modeling_qwen.py imports it only when
use_cache_kernel is on (off here), but transformers copies every relative import of the remote code and stops
when one is missing. Then a marker line, then the user's call with the keywords
a step gives. The remote code logs through transformers' get_logger under `transformers_modules.<folder>`,
which is outside the `transformers` logger tree and reaches the root logger; a handler there prints each
record (`ERRKB-LOG`), and `relog` logs the ones after the marker again in the worker.

Environment: a new virtual environment with torch 2.13.0+cpu (local wheel) and einops, transformers 4.32.0
(the release Qwen-Audio's requirements.txt pins; `pip --target` with its dependencies) and
transformers-stream-generator 0.0.4 (pinned there too; `pip --target --no-deps`), which transformers asks for
because modeling_qwen.py imports it."""

from __future__ import annotations

import ast
import json
import logging

from verification.cases import _builds as b
from verification.cases import _downstream, _venv

REPO = "QwenLM/Qwen-Audio"
COMMIT = "0b0e882e9a7661a627a77b6d804da64e05fff7a1"
FILES = ("modeling_qwen.py", "configuration_qwen.py", "qwen_generation_utils.py", "audio.py", "mel_filters.npz", "config.json")
TRANSFORMERS = "transformers==4.32.0"
# modeling_qwen.py imports it (inside a function); transformers' remote-code check asks for every import it finds
STREAM_GENERATOR = "transformers-stream-generator==0.0.4"
LOGGER = "transformers_modules"
MARK = "ERRKB-PHASE load"

CHILD = r'''
import json, logging, os, shutil, sys, tempfile
class _Tap(logging.Handler):
    def emit(self, r):
        print("ERRKB-LOG", r.levelname, r.name, repr(r.getMessage()), flush=True)
logging.getLogger().addHandler(_Tap())
import torch
ROOT, KW = sys.argv[1], json.loads(sys.argv[2])
folder = os.path.join(tempfile.mkdtemp(), "qwen_tiny")
os.makedirs(folder)
for name in ("modeling_qwen.py", "configuration_qwen.py", "qwen_generation_utils.py", "audio.py", "mel_filters.npz"):
    shutil.copy(os.path.join(ROOT, name), folder)
open(os.path.join(folder, "cpp_kernels.py"), "w").close()
cfg = json.load(open(os.path.join(ROOT, "config.json")))
cfg.update(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, kv_channels=16, intermediate_size=128,
           vocab_size=256, max_position_embeddings=64, seq_length=64)
cfg["audio"].update(n_state=32, n_head=2, n_layer=1, output_dim=64, audio_start_id=250)
json.dump(cfg, open(os.path.join(folder, "config.json"), "w"))
from transformers import AutoConfig, AutoModelForCausalLM
config = AutoConfig.from_pretrained(folder, trust_remote_code=True)
config.fp32, config.use_flash_attn = True, False
torch.manual_seed(0)
torch.save(AutoModelForCausalLM.from_config(config, trust_remote_code=True).state_dict(),
           os.path.join(folder, "pytorch_model.bin"))
print("ERRKB-PHASE load", flush=True)
m = AutoModelForCausalLM.from_pretrained(folder, trust_remote_code=True, **KW).eval()
mod = sys.modules[type(m).__module__]
print("LOADED", json.dumps({"use_flash_attn": m.config.use_flash_attn, "dtype": str(next(m.parameters()).dtype),
      "apply_rotary_emb_func": mod.apply_rotary_emb_func is not None, "rms_norm": mod.rms_norm is not None,
      "flash_attn_unpadded_func": mod.flash_attn_unpadded_func is not None}), flush=True)
ids = torch.randint(0, 200, (1, 8))
with torch.no_grad():
    logits = m(ids).logits
    norm = m.transformer.h[0].ln_1
    x = torch.randn(2, 8, 64, dtype=next(m.parameters()).dtype)
    got = norm(x).float()
    xf = x.double()
    ref = (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + norm.eps) * norm.weight.double()).float()
print("FORWARD", json.dumps({"shape": list(logits.shape), "finite": bool(torch.isfinite(logits).all()),
      "rmsnorm_max_error": float((got - ref).abs().max())}), flush=True)
'''

_runs: dict = {}


def env(ctx) -> _venv.Venv:
    made = _venv.venv(ctx, "cpu-torch-einops", pip=b.PIP, install=[*b.cpu_torch_requirement(), "einops"])
    _venv.noted(ctx, made)
    return made


def load(ctx, kwargs: dict) -> _venv.Run:
    """from_pretrained(<tiny Qwen folder>, trust_remote_code=True, **kwargs) in env(); flash-attn absent."""
    key = json.dumps(kwargs, sort_keys=True)
    if key not in _runs:
        made = env(ctx)
        root = _downstream.tree(ctx, REPO, COMMIT, FILES)
        code = CHILD.replace("sys.argv[1], json.loads(sys.argv[2])", f"{str(root)!r}, json.loads({key!r})")
        _runs[key] = b.run_with_torch(ctx, code, env=made, path=[b.target_dir(ctx, TRANSFORMERS, env=made),
                                                                   b.target_dir(ctx, STREAM_GENERATOR, no_deps=True, env=made)],
                                      extra_env={"HF_HUB_OFFLINE": "1", "HF_MODULES_CACHE": str(_venv._tmp_root() / "hf-modules")})
    res = _runs[key]
    ctx.note(f"from_pretrained(<tiny Qwen folder>, trust_remote_code=True, {', '.join(f'{k}={v!r}' for k, v in kwargs.items())}): "
             f"{result(res, 'LOADED ') or _venv.last_exception(res.output, 300)}")
    return res


def result(res: _venv.Run, prefix: str) -> dict | None:
    line = next((line for line in res.output.splitlines() if line.startswith(prefix)), None)
    return json.loads(line[len(prefix):]) if line else None


def logged(res: _venv.Run) -> list[str]:
    """The remote code's log lines after the marker (the user's from_pretrained and forward)."""
    after = res.output.split(MARK, 1)[-1] if MARK in res.output else ""
    return [ast.literal_eval(line.split(" ", 3)[3]) for line in after.splitlines()
            if line.startswith("ERRKB-LOG ") and line.split(" ", 3)[2].startswith(LOGGER)]


def relog(output: str) -> None:
    after = output.split(MARK, 1)[-1] if MARK in output else ""
    for line in after.splitlines():
        if line.startswith("ERRKB-LOG "):
            _, level, name, text = line.split(" ", 3)
            logging.getLogger(name).log(getattr(logging, level, logging.WARNING), ast.literal_eval(text))


def ran(res: _venv.Run) -> dict:
    """The model loaded and ran a forward pass with finite logits; its RMSNorm matches fp64."""
    out = result(res, "FORWARD ")
    if out is None:
        _venv.reraise(res.output)
        raise AssertionError(f"the model did not run: {res.tail(400)}")
    if out["shape"] != [1, 8, 256] or not out["finite"]:
        raise AssertionError(f"unexpected forward result: {out}")
    return out


RMSNORM_TOLERANCE = 3e-2  # bfloat16 output (8 bits of mantissa) of values up to about 4


def runs_without_flash_attn(ctx) -> None:
    """The Qwen remote code loads without flash-attn's extensions and runs a forward pass whose
    PyTorch RMSNorm (bfloat16) is within RMSNORM_TOLERANCE of fp64."""
    res = load(ctx, {"bf16": True})

    def works_without():
        out = ran(res)
        if out["rmsnorm_max_error"] > RMSNORM_TOLERANCE:
            raise AssertionError(f"the PyTorch RMSNorm is off by {out['rmsnorm_max_error']} (tolerance {RMSNORM_TOLERANCE})")
        ctx.note(f"forward {out}; RMSNorm (bfloat16) within {out['rmsnorm_max_error']:.2e} of fp64, "
                 f"tolerance {RMSNORM_TOLERANCE}")
    ctx.call(works_without)


def flash_attn_check(ctx, code: str) -> str:
    """The fix's check, run by env()'s Python: the exception it names."""
    res = env(ctx).python_run(code)
    cause = _venv.last_exception(res.output, 300)
    ctx.note(f"`python -c {code!r}`: {cause}")
    return cause
