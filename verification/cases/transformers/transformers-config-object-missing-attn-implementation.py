"""transformers' BERT layers read config._attn_implementation from 4.41.0 on; a configuration object that
is not a PretrainedConfig (a hand-made stand-in, as proteomics and multimodal projects build around
BertEncoder) then fails with "'<class>' object has no attribute '_attn_implementation'".

Each run is a child process on a CPU-only torch (b.with_cpu_torch(), torch 2.13.0+cpu) with one
transformers release installed with pip --target: it builds transformers' BertEncoder from a small
plain-Python configuration class written here (two layers, hidden size 32, dropout 0) and runs it in
eval mode on a fixed input. The reference is 4.40.2, which does not read the attribute: its run saves
the encoder's weights, the input and the output, and every other run loads those weights and compares.

Reproduce: the plain class raises the record's message on 4.41.0, 4.47.1 and 4.57.3 (while the encoder
is built) and on 5.25.0 (the step notes where); 4.40.2 must build and run it (else the step refutes).
Fix 1: the same class with _attn_implementation = "eager" set builds on 4.41.0, 4.47.1, 4.57.3 and 5.25.0
and gives 4.40.2's output. Fix 2: BertConfig(..., attn_implementation="eager") with the same sizes does
too; the step notes what BertConfig without the option does on each release. Fix 3 (a project release
that sets the attribute) is read from peptdeep's wheels, not run. Fix 4: 4.40.2 runs the plain class.

The second way to meet the message, a whole model pickled under an older release: a two-layer GPT2Model
saved with torch.save(model) under 4.39.3 (GPT-2 has no _attn_implementation there) and loaded under
4.47.1 raises "'GPT2Model' object has no attribute '_attn_implementation'" in its forward pass without an
attention mask (part of reproduce; 4.40.2 reads the attribute only when a mask is given, and the step
notes what it does). Fix 5: under 4.47.1 a GPT2Model built from the same GPT2Config with the pickled model's
state_dict loaded runs and gives 4.39.3's output."""

import json
import os

from errkb.verify.case import Refuted
from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 2400
REFERENCE = "transformers==4.40.2"
READS = ("transformers==4.41.0", "transformers==4.47.1", "transformers==4.57.3", "transformers==5.25.0")

# mode: "plain" (no attribute), "plain-eager" (the attribute set), "bertconfig-eager", "bertconfig"
CHILD = r'''
import json, os, sys, torch, transformers
from transformers.models.bert.modeling_bert import BertEncoder

class PlainBertConfig:
    """A configuration written by hand, not derived from transformers' PretrainedConfig."""
    def __init__(self):
        self.hidden_size = 32
        self.num_attention_heads = 4
        self.num_hidden_layers = 2
        self.intermediate_size = 64
        self.hidden_act = "gelu"
        self.hidden_dropout_prob = 0.0
        self.attention_probs_dropout_prob = 0.0
        self.layer_norm_eps = 1e-12
        self.initializer_range = 0.02
        self.is_decoder = False
        self.add_cross_attention = False
        self.chunk_size_feed_forward = 0
        self.output_attentions = False
        self.output_hidden_states = False
        self.use_return_dict = False
        self.position_embedding_type = "absolute"

MODE, STORE = sys.argv[1], sys.argv[2]
print("transformers", transformers.__version__, "torch", torch.__version__, flush=True)
sizes = dict(hidden_size=32, num_attention_heads=4, num_hidden_layers=2, intermediate_size=64,
             hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, layer_norm_eps=1e-12)
if MODE == "plain":
    cfg = PlainBertConfig()
elif MODE == "plain-eager":
    cfg = PlainBertConfig()
    cfg._attn_implementation = "eager"
elif MODE == "bertconfig-eager":
    cfg = transformers.BertConfig(attn_implementation="eager", **sizes)
else:
    cfg = transformers.BertConfig(**sizes)
print("STAGE build", flush=True)
torch.manual_seed(0)
enc = BertEncoder(cfg).eval()
print("BUILT", flush=True)
ref_path = os.path.join(STORE, "reference.pt")
if os.path.exists(ref_path):
    ref = torch.load(ref_path)
    enc.load_state_dict(ref["state"])
    x = ref["x"]
else:
    ref, x = None, torch.randn(2, 8, 32, generator=torch.Generator().manual_seed(1))
print("STAGE forward", flush=True)
with torch.no_grad():
    out = enc(x, return_dict=False)[0]
if ref is None:
    torch.save({"state": enc.state_dict(), "x": x, "out": out}, ref_path)
    print("SAVED", flush=True)
else:
    print("MAXDIFF", float((out - ref["out"]).abs().max()), flush=True)
print("RAN", tuple(out.shape), flush=True)
'''

GPT2_CHILD = r'''
import os, sys, torch, transformers
from transformers import GPT2Config, GPT2Model
MODE, STORE = sys.argv[1], sys.argv[2]
print("transformers", transformers.__version__, "torch", torch.__version__, flush=True)
cfg = dict(vocab_size=64, n_positions=32, n_embd=32, n_layer=2, n_head=4, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
whole, ref = os.path.join(STORE, "gpt2-whole.pt"), os.path.join(STORE, "gpt2-ref.pt")
if MODE == "save":
    torch.manual_seed(0)
    model = GPT2Model(GPT2Config(**cfg)).eval()
    ids = torch.randint(0, 64, (2, 8), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        out = model(ids)[0]
    torch.save(model, whole)
    torch.save({"ids": ids, "out": out}, ref)
    print("SAVED", flush=True)
    sys.exit(0)
saved = torch.load(ref)
if MODE == "load-pickled":
    model = torch.load(whole, weights_only=False)
else:
    pickled = torch.load(whole, weights_only=False)
    model = GPT2Model(GPT2Config(**cfg)).eval()
    model.load_state_dict(pickled.state_dict())
print("STAGE forward", flush=True)
with torch.no_grad():
    out = model(saved["ids"])[0]
print("MAXDIFF", float((out - saved["out"]).abs().max()), flush=True)
print("RAN", tuple(out.shape), flush=True)
'''
OLD_GPT2, NEW_GPT2 = "transformers==4.39.3", "transformers==4.47.1"

_runs: dict = {}


def _store(ctx) -> str:
    folder = _venv._tmp_root() / "bert-plain-config"
    folder.mkdir(exist_ok=True)
    return str(folder)


def _run(ctx, rel: str, mode: str, child: str = CHILD) -> _venv.Run:
    key = (rel, mode)
    if key in _runs:
        return _runs[key]
    env = b.with_cpu_torch(ctx)
    if env.notes and env.notes[0] not in ctx.notes:
        ctx.note(env.notes[0])
    if child is CHILD and rel != REFERENCE:
        _reference(ctx)
    if child is GPT2_CHILD and mode != "save":
        _gpt2_saved(ctx)
    res = _venv.run([env.python, "-c", child, mode, _store(ctx)], timeout=600, cwd=_venv._tmp_root(),
                    env=_venv.tool_env(VIRTUAL_ENV=str(env.path), PYTHONPATH=b.target_dir(ctx, rel, env=env)))
    _runs[key] = res
    return res


def _stage(res: _venv.Run) -> str:
    stages = [line.split()[1] for line in res.output.splitlines() if line.startswith("STAGE ")]
    return stages[-1] if stages else "import"


def _outcome(res: _venv.Run) -> str:
    causes = _venv.exception_lines(res.output)
    if causes:
        return f"{causes[-1][0]}: {causes[-1][1][:240]} (during {_stage(res)})"
    diff = [line for line in res.output.splitlines() if line.startswith(("MAXDIFF", "SAVED"))]
    return "ran" + (f", {diff[-1]}" if diff else "")


def _reference(ctx) -> None:
    res = _run(ctx, REFERENCE, "plain")
    note = f"{REFERENCE}, plain class: {_outcome(res)}"
    if note not in ctx.notes:
        ctx.note(note)
    if "RAN" not in res.output:
        ctx.observed = {"class": None, "message": None, "reference": _outcome(res)}
        raise Refuted(f"{REFERENCE} did not run the plain configuration: {_outcome(res)}")


def _matches_reference(ctx, rel: str, mode: str) -> float:
    res = _run(ctx, rel, mode)
    ctx.note(f"{rel}, {mode}: {_outcome(res)}")
    _venv.reraise(res.output)
    diff = [float(line.split()[1]) for line in res.output.splitlines() if line.startswith("MAXDIFF")]
    if not diff:
        raise AssertionError(f"{rel} {mode}: no output ({res.tail(400)})")
    return diff[0]


def _gpt2_saved(ctx) -> None:
    res = _run(ctx, OLD_GPT2, "save", GPT2_CHILD)
    note = f"{OLD_GPT2}: two-layer GPT2Model pickled whole: {_outcome(res)}"
    if note not in ctx.notes:
        ctx.note(note)
    if "SAVED" not in res.output:
        raise RuntimeError(f"could not pickle the model under {OLD_GPT2}: {_outcome(res)}")


def reproduce(ctx):
    _reference(ctx)
    ctx.note(f"transformers==4.40.2: the pickled model run without a mask: "
             f"{_outcome(_run(ctx, 'transformers==4.40.2', 'load-pickled', GPT2_CHILD))}")
    pickled = _run(ctx, NEW_GPT2, "load-pickled", GPT2_CHILD)
    ctx.note(f"{NEW_GPT2}: the pickled model loaded and run: {_outcome(pickled)}")
    if not _venv.tool_message(pickled.output, ctx.record["template"]):
        ctx.observed = {"class": None, "message": None, "pickled": _outcome(pickled)}
        raise Refuted(f"the model pickled under {OLD_GPT2} did not raise the message under {NEW_GPT2}")
    missing = {}
    for rel in READS:
        res = _run(ctx, rel, "plain")
        ctx.note(f"{rel}, plain class: {_outcome(res)}")
        if not _venv.tool_message(res.output, ctx.record["template"]):
            missing[rel] = _outcome(res)
    if missing:
        ctx.observed = {"class": None, "message": None, "instead": missing}
        raise Refuted(f"no such message from {', '.join(missing)}")
    ctx.expect_error(_venv.reraise, _runs[(READS[0], "plain")].output, ctx.record["template"])


def _fix(ctx, mode: str) -> None:
    diffs = [ctx.call(_matches_reference, ctx, rel, mode) for rel in READS]
    ctx.close(diffs, [0.0] * len(diffs), atol=1e-6, what=f"{mode} encoder output against {REFERENCE}'s")


def fix_1(ctx):
    _fix(ctx, "plain-eager")


def fix_2(ctx):
    _fix(ctx, "bertconfig-eager")
    for rel in READS:
        ctx.note(f"{rel}, BertConfig without attn_implementation: {_outcome(_run(ctx, rel, 'bertconfig'))}")


def fix_3(ctx):
    ctx.skip("read, not run: peptdeep 1.2.0-1.3.0 wheels set the attribute in their configuration class "
             "(1.1.9 does not); running peptdeep needs its scientific dependency stack")


def fix_4(ctx):
    _reference(ctx)
    ctx.note(f"{REFERENCE} builds and runs the plain configuration (see above)")


def fix_5(ctx):
    diff = ctx.call(_matches_reference_gpt2, ctx)
    ctx.close([diff], [0.0], atol=1e-6, what=f"rebuilt GPT2Model under {NEW_GPT2} against {OLD_GPT2}'s output")


def _matches_reference_gpt2(ctx) -> float:
    res = _run(ctx, NEW_GPT2, "load-state", GPT2_CHILD)
    ctx.note(f"{NEW_GPT2}: GPT2Model rebuilt from its config, pickled model's state_dict loaded: {_outcome(res)}")
    _venv.reraise(res.output)
    diff = [float(line.split()[1]) for line in res.output.splitlines() if line.startswith("MAXDIFF")]
    if not diff:
        raise AssertionError(f"no output ({res.tail(400)})")
    return diff[0]
