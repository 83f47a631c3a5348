"""Baichuan2-13B-Chat's remote modeling code logs 'Xformers is not installed correctly. ...' at WARNING when
`from xformers import ops` raises ImportError while modeling_baichuan.py is imported; the model still works,
since xformers is used only in training mode.

The Hugging Face Hub is out of reach here; the case reads the copy the record cites, jrd77/Baichuan2-13B-Chat at
35e3d5af (a GitHub mirror of the Hub repository's files), exported from a local clone
(verification/cases/_downstream.py), nothing of it committed. Environment: a new virtual environment with torch
2.13.0+cpu (local wheel) and psutil, transformers 4.32.0 (`pip --target` with its dependencies; the checkpoint's
config names 4.29.2, the Baichuan2 README asks for 4.29-4.33) and accelerate 0.21.0 (`pip --target --no-deps`;
modeling_baichuan.py imports init_empty_weights from it at the top); xformers not installed.

transformers' remote-code loader checks the imports of every file the model file imports relatively, and
quantizer.py imports bitsandbytes at its top, so `from_pretrained(..., trust_remote_code=True)` asks for
bitsandbytes before importing anything (a wheel of some tens of MB, not installed here). The child therefore
registers `baichuan2` as a bare package over the exported folder and imports modeling_baichuan.py unchanged,
which is the import the loader would do; its logger (transformers' get_logger under the module's name) reaches
the root logger, where a handler prints each record for the worker to log again.

Reproduce: the import logs the record's line at WARNING on `baichuan2.modeling_baichuan`. Fix 1 (ignore it for
inference): a tiny BaichuanForCausalLM (2 layers, width 64, 4 heads, vocabulary 128) made from the same code
runs forward in eval mode with finite logits (its RMSNorm weights set to one first: the remote RMSNorm makes
them with torch.empty and leaves them to the checkpoint, so a model made from a config alone holds garbage there); its first attention layer, called on its own, matches an fp64
ALiBi-masked softmax attention computed from the layer's own weights. Fix 2 (install xformers) needs an
xformers build for a CUDA torch: skipped."""

import ast
import json
import logging

from verification.cases import _builds as b
from verification.cases import _downstream, _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
REPO = "jrd77/Baichuan2-13B-Chat"
COMMIT = "35e3d5af948ecfe718bbb31633f053ae2a063725"
FILES = ("modeling_baichuan.py", "configuration_baichuan.py", "generation_utils.py")
TRANSFORMERS = "transformers==4.32.0"
ACCELERATE = "accelerate==0.21.0"
LOGGER = "baichuan2"
TOLERANCE = 1e-5

CHILD = r'''
import importlib.util, json, logging, sys, types
class _Tap(logging.Handler):
    def emit(self, r):
        print("ERRKB-LOG", r.levelname, r.name, repr(r.getMessage()), flush=True)
logging.getLogger().addHandler(_Tap())
import torch
ROOT = sys.argv[1]
pkg = types.ModuleType("baichuan2")
pkg.__path__ = [ROOT]
sys.modules["baichuan2"] = pkg
print("XFORMERS findable:", importlib.util.find_spec("xformers") is not None, flush=True)
from baichuan2.configuration_baichuan import BaichuanConfig
from baichuan2 import modeling_baichuan as mb
print("IMPORTED xops is None:", mb.xops is None, flush=True)
cfg = BaichuanConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                     num_attention_heads=4, model_max_length=64)
torch.manual_seed(0)
m = mb.BaichuanForCausalLM(cfg).eval()
for mod in m.modules():  # the remote RMSNorm leaves its weight uninitialised (torch.empty): a checkpoint fills it
    if type(mod).__name__ == "RMSNorm":
        mod.weight.data.fill_(1.0)
ids = torch.randint(3, 128, (1, 8))
with torch.no_grad():
    logits = m(input_ids=ids).logits
    # the first layer's attention against fp64 softmax attention with the model's own ALiBi mask
    x = torch.randn(1, 8, 64)
    attn = m.model.layers[0].self_attn
    mask = m.model.get_alibi_mask(x, 8)[:, :8, :8]
    got = attn(hidden_states=x, attention_mask=mask.unsqueeze(0))[0]
    w = attn.W_pack.weight.double()
    q, k, v = (x.double() @ w.T).split(64, dim=-1)
    q, k, v = (t.view(1, 8, 4, 16).transpose(1, 2) for t in (q, k, v))
    s = q @ k.transpose(-1, -2) / 16 ** 0.5 + mask.double().unsqueeze(0)
    ref = (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(1, 8, 64) @ attn.o_proj.weight.double().T
print("FORWARD", json.dumps({"shape": list(logits.shape), "finite": bool(torch.isfinite(logits).all()),
      "attention_max_error": float((got.double() - ref).abs().max())}), flush=True)
'''

_runs: dict = {}


def _env(ctx) -> _venv.Venv:
    env = _venv.venv(ctx, "cpu-torch-psutil", pip=b.PIP, install=[*b.cpu_torch_requirement(), "psutil"])
    _venv.noted(ctx, env)
    return env


def _run(ctx) -> _venv.Run:
    if "run" not in _runs:
        env = _env(ctx)
        root = _downstream.tree(ctx, REPO, COMMIT, FILES)
        code = CHILD.replace("sys.argv[1]", repr(str(root)))
        _runs["run"] = b.run_with_torch(ctx, code, env=env, path=[b.target_dir(ctx, TRANSFORMERS, env=env),
                                                                  b.target_dir(ctx, ACCELERATE, no_deps=True, env=env)])
    res = _runs["run"]
    ctx.note("child printed: " + "; ".join(line for line in res.output.splitlines()
                                            if line.startswith(("XFORMERS", "IMPORTED", "FORWARD"))))
    return res


def _relog(output: str) -> None:
    for line in output.splitlines():
        if line.startswith("ERRKB-LOG "):
            _, level, name, text = line.split(" ", 3)
            logging.getLogger(name).log(getattr(logging, level, logging.WARNING), ast.literal_eval(text))


def reproduce(ctx):
    ctx.expect_logged(LOGGER, _relog, _run(ctx).output)


def fix_1(ctx):
    res = _run(ctx)

    def works():
        line = _venv.printed(res, "FORWARD ")
        out = json.loads(line[8:])
        if out["shape"] != [1, 8, 128] or not out["finite"]:
            raise AssertionError(f"unexpected forward result: {out}")
        if out["attention_max_error"] > TOLERANCE:
            raise AssertionError(f"attention off by {out['attention_max_error']} (tolerance {TOLERANCE})")
        ctx.note(f"eval-mode forward without xformers: {out}; tolerance {TOLERANCE}")
    ctx.call(works)
    ctx.note("the line is logged at import whatever happens later: 'ignore it' means inference works without xformers")


def fix_2(ctx):
    ctx.skip("xformers wheels are built for CUDA builds of torch (and pin one); none fits this CPU-only torch")
