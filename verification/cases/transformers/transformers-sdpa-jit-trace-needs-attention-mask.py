"""transformers 4.36-4.39 refuse to torch.jit.trace a causal model whose SDPA attention gets no mask:
"Attention using SDPA can not be traced with torch.jit.trace when no attention_mask is provided."

Tiny causal LMs built from a config in a child process (two layers of width 64, saved and loaded with
from_pretrained as a checkpoint folder; no Hub), torch 2.13.0+cpu (with_cpu_torch, local wheel), each
transformers release a `pip --target` folder. The model is traced with torch.jit.trace(model, (input_ids,))
(torchscript=True), which is the record's trigger.

Which model reaches the helper depends on the release (the record's meaning): Llama on 4.36.x and
4.37.x, Mistral from 4.37 (Llama builds its mask elsewhere from 4.38). So reproduce traces a Llama on
4.36.2 and 4.37.2 and a Mistral on 4.38.2 and 4.39.3; every one must raise the message. What a Llama does
on 4.38.2 is noted. Fix 1: the same traces with an all-ones attention_mask as a keyword input
(example_kwarg_inputs) go through, and the traced module's logits match the untraced model's. Fix 2:
attn_implementation="eager" traces without a mask. Fix 3: 4.40.0 traces both models without a mask, SDPA
kept, and the traced logits match the untraced ones."""

from errkb.verify.case import Refuted
from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1800

RAISING = {"transformers==4.36.2": "llama", "transformers==4.37.2": "llama",
           "transformers==4.38.2": "mistral", "transformers==4.39.3": "mistral"}
FIXED = "transformers==4.40.0"

CHILD = r'''
import json, sys, tempfile, torch
from transformers import AutoModelForCausalLM, LlamaConfig, MistralConfig
KIND, IMPL, MASK = {kind!r}, {impl!r}, {mask!r}
sizes = dict(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=64)
cfg = (LlamaConfig if KIND == "llama" else MistralConfig)(**sizes)
torch.manual_seed(0)
folder = tempfile.mkdtemp()
AutoModelForCausalLM.from_config(cfg).save_pretrained(folder)
kw = dict(torchscript=True, torch_dtype=torch.float32)
if IMPL:
    kw["attn_implementation"] = IMPL
m = AutoModelForCausalLM.from_pretrained(folder, **kw).eval()
print("LOADED", type(m).__name__, m.config._attn_implementation, flush=True)
ids = torch.randint(0, 128, (1, 8))
with torch.no_grad():
    if MASK:
        inputs = dict(input_ids=ids, attention_mask=torch.ones_like(ids))
        traced = torch.jit.trace(m, example_kwarg_inputs=inputs)
        got, want = traced(**inputs)[0], m(**inputs)[0]
    else:
        traced = torch.jit.trace(m, (ids,))
        got, want = traced(ids)[0], m(ids)[0]
print("TRACED", json.dumps(dict(maxdiff=float((got - want).abs().max()))), flush=True)
'''

_runs: dict = {}


def _trace(ctx, release: str, kind: str, *, impl: str | None = None, mask: bool = False) -> _venv.Run:
    key = (release, kind, impl, mask)
    if key not in _runs:
        code = CHILD.replace("{kind!r}", repr(kind)).replace("{impl!r}", repr(impl)).replace("{mask!r}", repr(mask))
        _runs[key] = b.run_with_release(ctx, code, release, extra_env={"HF_HUB_OFFLINE": "1"})
    res = _runs[key]
    how = (f"attn_implementation={impl!r}, " if impl else "") + ("with an all-ones attention_mask" if mask else "input_ids only")
    ctx.note(f"{release}: torch.jit.trace of a tiny {kind} ({how}): {_outcome(res)}")
    return res


def _outcome(res: _venv.Run) -> str:
    traced = next((line for line in res.output.splitlines() if line.startswith("TRACED ")), None)
    return ("traced, " + traced[7:]) if traced else _venv.last_exception(res.output, 300)


def _traced(ctx, res: _venv.Run, what: str) -> float:
    """The trace went through without the record's message; returns the max logit difference."""
    _venv.reraise(res.output, ctx.record["template"])
    line = next((line for line in res.output.splitlines() if line.startswith("TRACED ")), None)
    if line is None:
        _venv.reraise(res.output)
        raise AssertionError(f"{what}: the trace did not finish: {res.tail(500)}")
    import json

    return json.loads(line[7:])["maxdiff"]


def reproduce(ctx):
    runs = {rel: _trace(ctx, rel, kind) for rel, kind in RAISING.items()}
    _trace(ctx, "transformers==4.38.2", "llama")  # noted only: Llama no longer reaches the helper from 4.38
    missing = {rel: _outcome(res) for rel, res in runs.items() if not _venv.tool_message(res.output, ctx.record["template"])}
    if missing:
        ctx.observed = {"class": None, "message": None, "instead": missing}
        raise Refuted(f"no such message from {', '.join(missing)}")
    ctx.expect_error(_venv.reraise, runs["transformers==4.39.3"].output, ctx.record["template"])


def _all_trace(ctx, runs: dict) -> None:
    diffs = [ctx.call(_traced, ctx, res, f"{rel} {kind}") for (rel, kind), res in runs.items()]
    ctx.close(diffs, [0.0] * len(diffs), atol=1e-5, what="traced logits against the untraced model")


def fix_1(ctx):
    _all_trace(ctx, {(rel, kind): _trace(ctx, rel, kind, mask=True) for rel, kind in RAISING.items()})


def fix_2(ctx):
    _all_trace(ctx, {(rel, kind): _trace(ctx, rel, kind, impl="eager") for rel, kind in RAISING.items()})


def fix_3(ctx):
    runs = {(FIXED, kind): _trace(ctx, FIXED, kind) for kind in ("llama", "mistral")}
    for (rel, kind), res in runs.items():
        if "LOADED" in res.output and " sdpa" not in next(line for line in res.output.splitlines() if line.startswith("LOADED")):
            raise AssertionError(f"{rel} {kind} did not load with SDPA: {res.tail(300)}")
    _all_trace(ctx, runs)
