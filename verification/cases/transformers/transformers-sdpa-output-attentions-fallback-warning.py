"""transformers 4.36-4.47: a model loaded with SDPA and asked for output_attentions=True logs
"<Model> is using <Model>SdpaAttention, but `torch.nn.functional.scaled_dot_product_attention` does
not support `output_attentions=True`. Falling back to the manual attention implementation ..." and
runs the layer through eager attention.

A tiny Llama built from a config (_tiny_llama.py) with torch 2.14.1 (PyPI; a CPU is enough: the
warning and the fallback happen before any kernel choice).

Reproduce: one forward pass with output_attentions=True on 4.36.2 and 4.47.1 (attn_implementation
"sdpa") logs the warning and returns one attention map per layer. Fix 1: loaded with
attn_implementation="eager", the same call logs nothing and returns the maps. Fix 2: without
output_attentions, the SDPA model logs nothing."""

from errkb import templates
from errkb.verify.case import Refuted
from verification.cases import _tiny_llama as llama

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
RELEASES = ("transformers==4.36.2", "transformers==4.47.1")
LOGGER = "transformers"


def _forward(output_attentions: bool) -> str:
    return ("out = m(torch.randint(0, 128, (1, 8)), output_attentions=%s)\n"
            "print('ATTENTIONS', None if out.attentions is None else len(out.attentions), flush=True)\n"
            % output_attentions)


def _runs(ctx, implementation: str, output_attentions: bool) -> dict:
    return {rel: llama.load(ctx, rel, f'attn_implementation="{implementation}"', after=_forward(output_attentions))
            for rel in RELEASES}


def _warned(ctx, res) -> list[str]:
    pattern = templates.search_regex(ctx.record["template"])
    return [m for m in llama.logged(res.output) if pattern.search(m)]


def _maps(res) -> str:
    return next((line.split()[1] for line in res.output.splitlines() if line.startswith("ATTENTIONS ")), "none")


def reproduce(ctx):
    runs = _runs(ctx, "sdpa", True)
    for rel, res in runs.items():
        ctx.note(f"{rel}: attention maps returned: {_maps(res)}")
        if not _warned(ctx, res):
            ctx.observed = {"class": None, "message": None, "release": rel}
            raise Refuted(f"{rel} logged no such warning: {llama.outcome(res)}")
    ctx.expect_logged(LOGGER, llama.relog, runs[RELEASES[-1]].output)


def _quiet(ctx, runs: dict, want_maps: bool) -> None:
    for rel, res in runs.items():
        if _warned(ctx, res):
            raise Refuted(f"{rel} still logs the warning")
        if (_maps(res) == "2") != want_maps:
            raise AssertionError(f"{rel}: attention maps {_maps(res)}: {llama.outcome(res)}")
    ctx.note("no release logged the warning; attention maps " + ("returned" if want_maps else "not asked for"))


def fix_1(ctx):
    runs = _runs(ctx, "eager", True)
    ctx.call(_quiet, ctx, runs, True)


def fix_2(ctx):
    runs = _runs(ctx, "sdpa", False)
    ctx.call(_quiet, ctx, runs, False)
