"""transformers 4.41-4.57: a BERT-family encoder on SDPA asked for output_attentions (or a head_mask, or
relative positions) logs "<Class> is used but `torch.nn.functional.scaled_dot_product_attention` does not
support non-absolute `position_embedding_type` or `output_attentions=True` or `head_mask`. Falling back
to the ... attention implementation ..." and runs eager attention for that call.

Environment: torch 2.13.0+cpu (b.with_cpu_torch(), local wheel), transformers 4.45.0 (the first release
with ALBERT's text) and 4.57.6 (the last 4.x release) each installed with pip --target. Tiny ALBERT and
BERT models are built from configs in code, saved and loaded with from_pretrained (no Hub); the
'transformers' logger is tapped.

Reproduce: on both releases, ALBERT and BERT loaded with attn_implementation="sdpa" and called twice
with output_attentions=True log the record's warning (ALBERT in each of its 2 layers on each call, 4
lines, BERT once: the meaning's logger.warning / warning_once claim) and return one attention map per layer;
4.57.6's ALBERT text has no 'or `head_mask`' (ALBERT's wording from 4.52.0), which the template leaves open. Fix 1: loaded with
attn_implementation="eager", the same calls log nothing, return the maps, and give the hidden states
the SDPA model gave in its fallback (the "same results" claim). Fix 2: the SDPA models called without
output_attentions log nothing and match the eager models within 1e-5."""

import json

from errkb import templates
from errkb.verify.case import Refuted
from verification.cases import _builds as b
from verification.cases import _tiny_llama as llama

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
RELEASES = ("transformers==4.45.0", "transformers==4.57.6")
LOGGER = "transformers"

CHILD = llama.LOG_TAP + r'''
import json, tempfile, torch
from transformers import AlbertConfig, AlbertModel, AutoModel, BertConfig, BertModel
MODE = "@MODE@"
torch.manual_seed(0)
models = {"albert": (AlbertConfig(vocab_size=100, embedding_size=16, hidden_size=32, num_attention_heads=4,
                                  intermediate_size=64, num_hidden_layers=2), AlbertModel),
          "bert": (BertConfig(vocab_size=100, hidden_size=32, num_attention_heads=4, intermediate_size=64,
                              num_hidden_layers=2), BertModel)}
ids = torch.randint(0, 100, (2, 12))
result = {}
for name, (cfg, cls) in models.items():
    folder = tempfile.mkdtemp()
    cls(cfg).save_pretrained(folder)
    out = {}
    for impl in ("sdpa", "eager"):
        m = AutoModel.from_pretrained(folder, attn_implementation=impl).eval()
        want = MODE in ("attentions", "eager")  # in "eager", the SDPA model's fallback is what the fix is compared with
        print("CALLS", name, impl, want, flush=True)
        with torch.no_grad():
            for _ in range(2):
                o = m(ids, output_attentions=want)
        out[impl] = o.last_hidden_state
        result[f"{name}-{impl}-maps"] = None if o.attentions is None else len(o.attentions)
        print("DONE", name, impl, flush=True)
    result[f"{name}-diff"] = float((out["sdpa"] - out["eager"]).abs().max())
print("RESULT", json.dumps(result), flush=True)
'''

_runs: dict = {}


def _run(ctx, mode: str) -> dict:
    if mode not in _runs:
        code = CHILD.replace("@MODE@", mode)
        _runs[mode] = {rel: b.run_with_release(ctx, code, rel, extra_env={"HF_HUB_OFFLINE": "1"}) for rel in RELEASES}
    return _runs[mode]


def _result(res) -> dict:
    found = [line[7:] for line in res.output.splitlines() if line.startswith("RESULT ")]
    if not found:
        raise AssertionError(f"the child printed no result: {res.tail(600)}")
    return json.loads(found[-1])


def _warnings_by_call(ctx, res) -> dict:
    """(model, implementation) -> how many of the record's warnings were logged during its two calls."""
    pattern = templates.search_regex(ctx.record["template"])
    counts, current = {}, None
    for line in res.output.splitlines():
        if line.startswith("CALLS "):
            current = tuple(line.split()[1:3])
            counts[current] = 0
        elif line.startswith("DONE "):
            current = None
        elif line.startswith("ERRKB-LOG ") and current and pattern.search(llama.logged(line)[0]):
            counts[current] += 1
    return counts


def reproduce(ctx):
    runs = _run(ctx, "attentions")
    for rel, res in runs.items():
        result, counts = _result(res), _warnings_by_call(ctx, res)
        ctx.note(f"{rel}: record's warning per two calls {counts}; maps {result}")
        if counts.get(("albert", "sdpa")) != 4 or counts.get(("bert", "sdpa")) != 1:
            ctx.observed = {"class": None, "message": None, "release": rel, "counts": str(counts)}
            raise Refuted(f"{rel}: not warned as the record says (ALBERT per layer and call, BERT once): {counts}")
        if counts.get(("albert", "eager")) or counts.get(("bert", "eager")):
            raise AssertionError(f"{rel}: the eager model warned too: {counts}")
    ctx.expect_logged(LOGGER, llama.relog, runs[RELEASES[-1]].output)


def fix_1(ctx):
    runs = _run(ctx, "eager")

    def quiet():
        diffs = []
        for rel, res in runs.items():
            result, counts = _result(res), _warnings_by_call(ctx, res)
            if any(counts.get((n, "eager")) for n in ("albert", "bert")):
                raise Refuted(f"{rel}: the eager model still logs the warning")
            if result["albert-eager-maps"] != 2 or result["bert-eager-maps"] != 2:
                raise AssertionError(f"{rel}: attention maps missing: {result}")
            ctx.note(f"{rel}: eager: no warning, 2 maps each; hidden states against the SDPA fallback: "
                     f"albert {result['albert-diff']:.1e}, bert {result['bert-diff']:.1e}")
            diffs += [result["albert-diff"], result["bert-diff"]]
        return diffs

    diffs = ctx.call(quiet)
    ctx.close(diffs, [0.0] * len(diffs), atol=1e-6, what="eager against the SDPA model's eager fallback")


def fix_2(ctx):
    runs = _run(ctx, "plain")

    def quiet():
        diffs = []
        for rel, res in runs.items():
            result, counts = _result(res), _warnings_by_call(ctx, res)
            if any(counts.values()):
                raise Refuted(f"{rel}: logged the warning without output_attentions: {counts}")
            ctx.note(f"{rel}: no warning; SDPA against eager: albert {result['albert-diff']:.1e}, bert {result['bert-diff']:.1e}")
            diffs += [result["albert-diff"], result["bert-diff"]]
        return diffs

    diffs = ctx.call(quiet)
    ctx.close(diffs, [0.0] * len(diffs), atol=1e-5, what="SDPA (no output_attentions) against eager")
