"""transformers' FlexAttention path refuses attention dropout: "`flex_attention` does not support `dropout`.
Please use it with inference only (`model.eval()`) or turn off the attention dropout in the respective
config."

A two-layer Llama saved from a config made in code with attention_dropout=0.1 (a checkpoint whose
config.json ships a non-zero dropout, the record's first situation), loaded with from_pretrained in a child
with transformers 4.57.3 next to torch 2.13.0+cpu (with_cpu_torch; FlexAttention runs on the CPU through
torch.compile), float32, one batch of 16 tokens.

Reproduce: attn_implementation="flex_attention", model in training mode (as after model.train() or inside
Trainer), forward: the record's ValueError. The notes say what 4.52.4 does (the record: no check there; on this CPU its compiled
FlexAttention then stops on inductor's CPU limits, which is no part of the claim).
Fix 1: the same load with `attention_dropout=0.0` passed to from_pretrained, still in training mode: runs,
and its logits match eager attention's in training mode with the same override (no dropout left anywhere).
Fix 2: the same load in eval mode: runs, and matches eager attention in eval mode. Fix 3:
attn_implementation="sdpa" in training mode runs and applies the dropout (its training-mode logits differ
from its eval-mode ones), and in eval mode it matches eager."""

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
RELEASE = "transformers==4.57.3"
BEFORE_CHECK = "transformers==4.52.4"
TOL = 1e-4  # float32 logits, FlexAttention (compiled) against eager

PRELUDE = r'''
import tempfile, torch
from transformers import AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM
import transformers
print("versions", transformers.__version__, torch.__version__, flush=True)
cfg = LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, max_position_embeddings=64, attention_dropout=0.1)
torch.manual_seed(0)
folder = tempfile.mkdtemp()
LlamaForCausalLM(cfg).save_pretrained(folder)
ids = torch.randint(0, 128, (1, 16))

def logits(impl, train, **kw):
    m = AutoModelForCausalLM.from_pretrained(folder, attn_implementation=impl, torch_dtype=torch.float32, **kw)
    m.train(train)
    print("loaded", impl, "training" if m.training else "eval", "attention_dropout", m.config.attention_dropout, flush=True)
    with torch.no_grad():
        return m(ids).logits

def report(name, a, b):
    print("MAXDIFF", name, float((a - b).abs().max()), flush=True)
'''
STEPS = {
    "reproduce": "logits('flex_attention', True)\nprint('returned')\n",
    "fix_1": "report('flex vs eager, training, attention_dropout=0.0', logits('flex_attention', True, attention_dropout=0.0), "
             "logits('eager', True, attention_dropout=0.0))\n",
    "fix_2": "report('flex vs eager, eval', logits('flex_attention', False), logits('eager', False))\n",
    "fix_3": "train = logits('sdpa', True)\nev = logits('sdpa', False)\nreport('sdpa training vs sdpa eval', train, ev)\n"
             "report('sdpa vs eager, eval', ev, logits('eager', False))\n",
}


def child(ctx, step: str, release: str = RELEASE) -> _venv.Run:
    res = b.run_with_release(ctx, PRELUDE + STEPS[step], release, extra_env={"HF_HUB_OFFLINE": "1"})
    shown = [ln for ln in res.output.splitlines() if ln.startswith(("versions", "loaded", "MAXDIFF"))]
    ctx.note(f"{release}: " + " | ".join(shown) + f"; {_venv.last_exception(res.output, 200)}")
    if not any(ln.startswith("loaded") for ln in shown):
        _venv.reraise(res.output)
        raise RuntimeError(f"the model did not load: {res.tail(600)}")
    return res


def diffs(res: _venv.Run) -> dict[str, float]:
    _venv.reraise(res.output)
    return {ln.split(" ", 1)[1].rsplit(" ", 1)[0]: float(ln.rsplit(" ", 1)[1])
            for ln in res.output.splitlines() if ln.startswith("MAXDIFF ")}


def matches(ctx, res: _venv.Run, name: str) -> None:
    err = diffs(res)[name]
    ctx.max_error, ctx.tolerance = err, {"atol": TOL}
    if err > TOL:
        raise AssertionError(f"{name}: max difference {err} over {TOL}")


def reproduce(ctx):
    older = child(ctx, "reproduce", BEFORE_CHECK)
    refused = _venv.tool_message(older.output, ctx.record["template"]) is not None
    ctx.note(f"{BEFORE_CHECK} in training mode with attention_dropout 0.1: "
             + ("refused with the record's message" if refused else "no dropout refusal; the forward "
                + ("ran" if "returned" in older.output else "went on and stopped on " + _venv.last_exception(older.output, 200))))
    res = child(ctx, "reproduce")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    res = child(ctx, "fix_1")
    ctx.call(matches, ctx, res, "flex vs eager, training, attention_dropout=0.0")


def fix_2(ctx):
    res = child(ctx, "fix_2")
    ctx.call(matches, ctx, res, "flex vs eager, eval")


def fix_3(ctx):
    res = child(ctx, "fix_3")

    def applies_dropout_and_matches():
        got = diffs(res)
        if got["sdpa training vs sdpa eval"] == 0.0:
            raise AssertionError("SDPA in training mode gave the eval-mode logits: no dropout was applied")
        matches(ctx, res, "sdpa vs eager, eval")

    ctx.call(applies_dropout_and_matches)
