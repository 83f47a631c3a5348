"""Project code hands its own keyword to a layer's self_attn, but only the class it patched accepts it; the
stock SDPA class transformers builds by default rejects it: "LlamaSdpaAttention.forward() got an
unexpected keyword argument 'last_select_mask_list'".

In a child process with torch 2.13.0+cpu (with_cpu_torch, local wheel) and one transformers release (a
`pip --target` folder), Python 3.11: a tiny causal LM built from a config (2 layers, width 64) and loaded
from a checkpoint folder with from_pretrained. The project's change is written here in two parts, as such
projects do it: a subclass of the model's eager attention class whose forward takes the keyword (it
registers itself in the release's <MODEL>_ATTENTION_CLASSES under "eager"), and the decoder passing the
keyword to self_attn, done with a forward pre-hook on every self_attn module that adds
`last_select_mask_list=None` to its keyword arguments. The keyword carries nothing, so the patched model
must give the stock model's logits.

Reproduce: loaded without attn_implementation (transformers picks SDPA on this torch), the forward raises
the record's TypeError for Llama on 4.36.2 and 4.41.2 and for Qwen2 on 4.47.1. Noted: Llama on 4.42.4,
whose SDPA forward takes **kwargs, runs and ignores the keyword (fix 2's caveat). Fix 1: the same code
loaded with attn_implementation="eager" runs the patched eager class; logits match the stock SDPA model
without the keyword. Fix 3: an SDPA subclass taught the keyword the same way, registered under "sdpa",
runs with SDPA kept. Fix 2 (the project's own pinned release) depends on the project; not run."""

import json

from errkb.verify.case import Refuted
from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1800

RAISING = (("transformers==4.36.2", "llama"), ("transformers==4.41.2", "llama"), ("transformers==4.47.1", "qwen2"))

CHILD = r'''
import importlib, json, tempfile, torch
import transformers
from transformers import AutoModelForCausalLM
KIND, IMPL, TEACH_SDPA = {kind!r}, {impl!r}, {teach!r}
mod = importlib.import_module(f"transformers.models.{KIND}.modeling_{KIND}")
classes = getattr(mod, KIND.upper() + "_ATTENTION_CLASSES")
sizes = dict(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=64)
cfg = getattr(transformers, "LlamaConfig" if KIND == "llama" else "Qwen2Config")(**sizes)
torch.manual_seed(0)
folder = tempfile.mkdtemp()
AutoModelForCausalLM.from_config(cfg).save_pretrained(folder)
ids = torch.randint(0, 128, (1, 8))
with torch.no_grad():
    ref = AutoModelForCausalLM.from_pretrained(folder, attn_implementation="sdpa", torch_dtype=torch.float32)(ids).logits

def taught(base):
    class Taught(base):
        def forward(self, *args, last_select_mask_list=None, **kwargs):
            # the project would use its keyword here; None means nothing to select
            return super().forward(*args, **kwargs)
    Taught.__name__ = Taught.__qualname__ = "Project" + base.__name__
    return Taught

classes["eager"] = taught(classes["eager"])
if TEACH_SDPA:
    classes["sdpa"] = taught(classes["sdpa"])
kw = dict(torch_dtype=torch.float32)
if IMPL:
    kw["attn_implementation"] = IMPL
m = AutoModelForCausalLM.from_pretrained(folder, **kw).eval()
print("LOADED", json.dumps(dict(impl=m.config._attn_implementation, attention=type(m.model.layers[0].self_attn).__name__)), flush=True)
for layer in m.model.layers:
    layer.self_attn.register_forward_pre_hook(lambda module, args, kwargs: (args, dict(kwargs, last_select_mask_list=None)),
                                              with_kwargs=True)
with torch.no_grad():
    logits = m(ids).logits
print("RAN", json.dumps(dict(maxdiff=float((logits - ref).abs().max()))), flush=True)
'''

_runs: dict = {}


def _line(res: _venv.Run, prefix: str) -> str | None:
    return next((line[len(prefix):] for line in res.output.splitlines() if line.startswith(prefix)), None)


def _run(ctx, release: str, kind: str, impl: str | None = None, teach: bool = False) -> _venv.Run:
    key = (release, kind, impl, teach)
    if key not in _runs:
        code = CHILD.replace("{kind!r}", repr(kind)).replace("{impl!r}", repr(impl)).replace("{teach!r}", repr(teach))
        _runs[key] = b.run_with_release(ctx, code, release, extra_env={"HF_HUB_OFFLINE": "1"})
    res = _runs[key]
    how = (f"attn_implementation={impl!r}" if impl else "no attn_implementation") + (", SDPA class taught the keyword" if teach else "")
    ran = _line(res, "RAN ")
    ctx.note(f"{release}: tiny {kind}, {how}: loaded {_line(res, 'LOADED ')}; "
             + (f"ran, {ran}" if ran else _venv.last_exception(res.output, 300)))
    return res


def reproduce(ctx):
    runs = {(rel, kind): _run(ctx, rel, kind) for rel, kind in RAISING}
    _run(ctx, "transformers==4.42.4", "llama")  # noted: its SDPA forward takes **kwargs
    missing = {f"{rel} {kind}": _venv.last_exception(res.output, 200) or "ran"
               for (rel, kind), res in runs.items() if not _venv.tool_message(res.output, ctx.record["template"])}
    if missing:
        ctx.observed = {"class": None, "message": None, "instead": missing}
        raise Refuted(f"no such message from {', '.join(missing)}")
    ctx.expect_error(_venv.reraise, runs[RAISING[0]].output, ctx.record["template"])


def _ran(ctx, res: _venv.Run, want: str) -> float:
    _venv.reraise(res.output, ctx.record["template"])
    line = _line(res, "RAN ")
    if line is None:
        _venv.reraise(res.output)
        raise AssertionError(res.tail(500))
    loaded = json.loads(_line(res, "LOADED "))
    if loaded["impl"] != want or not loaded["attention"].startswith("Project"):
        raise AssertionError(f"the model did not run the project's {want} class: {loaded}")
    return json.loads(line)["maxdiff"]


def _fix(ctx, impl: str | None, teach: bool, want: str) -> None:
    diffs = [ctx.call(_ran, ctx, _run(ctx, rel, kind, impl, teach), want) for rel, kind in RAISING]
    ctx.close(diffs, [0.0] * len(diffs), atol=1e-4, what="logits against the stock SDPA model")


def fix_1(ctx):
    _fix(ctx, "eager", False, "eager")


def fix_2(ctx):
    ctx.skip("the release to install is the one the project pins; no project is run here (Llama on 4.42.4, "
             "which accepts and ignores the keyword, is noted in reproduce)")


def fix_3(ctx):
    _fix(ctx, None, True, "sdpa")
