"""transformers 4.36.0-4.52.4 log "The model was loaded with use_flash_attention_2=True, which is deprecated
... Please use `attn_implementation="flash_attention_2"` instead." when from_pretrained gets the old flag.

The tiny Llama of _tiny_llama, loaded in a child process on a CPU-only torch (b.with_cpu_torch(), torch
2.13.0+cpu) with no flash-attn installed: each load goes past the deprecation notice and then stops at
transformers' FlashAttention-2 availability check, which is as far as a machine without flash-attn and a
GPU can go. Nothing is patched.

Reproduce: use_flash_attention_2=True logs the record's line on 4.36.0, 4.46.3 and 4.52.4 (the first and
last releases that have it, and one between); 4.35.2 (the flag without a notice) and 4.53.0 (the flag
gone) must not log it, else the step refutes; what they do instead is noted. Fix 1: the same loads with
attn_implementation="flash_attention_2" log nothing of the kind and stop at the very same check with the
same message as the flag did (the same implementation was selected), on 4.36.0, 4.46.3, 4.52.4 and
4.53.0. Fix 2's 4.34-4.35 branch is the flag on 4.35.2; its other branch is fix 1."""

from errkb import templates
from errkb.verify.case import Refuted
from verification.cases import _builds as b
from verification.cases import _tiny_llama as llama
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 2400
PRINTS = ("transformers==4.36.0", "transformers==4.46.3", "transformers==4.52.4")
SILENT = ("transformers==4.35.2", "transformers==4.53.0")
FLAG = "use_flash_attention_2=True, torch_dtype=torch.bfloat16"
OPTION = 'attn_implementation="flash_attention_2", torch_dtype=torch.bfloat16'

_runs: dict = {}


def _load(ctx, rel: str, args: str):
    env = b.with_cpu_torch(ctx)
    if not any(n in ctx.notes for n in env.notes):
        _venv.noted(ctx, env)
    key = (rel, args)
    if key not in _runs:
        _runs[key] = llama.load(ctx, rel, args, env=env)
    return _runs[key]


def _logs_it(ctx, res) -> list[str]:
    finder = templates.search_regex(ctx.record["template"])
    return [m for m in llama.logged(res.output) if finder.search(m)]


def _last_error(res) -> str:
    return llama.outcome(res)


def reproduce(ctx):
    runs = {rel: _load(ctx, rel, FLAG) for rel in PRINTS}
    llama.each_release(ctx, runs, logged_too=True)
    for rel in SILENT:
        res = _load(ctx, rel, FLAG)
        if _logs_it(ctx, res):
            ctx.observed = {"class": "logging.WARNING", "message": _logs_it(ctx, res)[0], "release": rel}
            raise Refuted(f"{rel} logs the notice too")
        ctx.note(f"{rel} with the flag logs no notice; it ends: {_last_error(res)}")
    ctx.expect_logged("transformers", llama.relog, runs[PRINTS[-1]].output)


def fix_1(ctx):
    for rel in (*PRINTS, SILENT[1]):
        res = _load(ctx, rel, OPTION)
        if _logs_it(ctx, res):
            ctx.observed = {"class": "logging.WARNING", "message": _logs_it(ctx, res)[0], "release": rel}
            raise Refuted(f"{rel} logs the notice with attn_implementation")
        if "ModuleNotFoundError" in res.output and "LOADED" not in res.output:
            raise RuntimeError(f"{rel} did not import here: {llama.outcome(res)}")
        if rel in PRINTS:
            flag = _load(ctx, rel, FLAG)
            if _last_error(flag) != _last_error(res):
                ctx.observed = {"class": None, "message": None, "flag": _last_error(flag), "option": _last_error(res)}
                raise Refuted(f"{rel}: the option and the flag end differently")
    ctx.note("attn_implementation logged no notice and ended where the flag did on every release above")


def fix_2(ctx):
    res = _load(ctx, SILENT[0], FLAG)
    if _logs_it(ctx, res):
        raise Refuted("4.35.2 logs the notice")
    ctx.note(f"4.35.2 with the flag: {_last_error(res)}")
    if "flash" not in _last_error(res).lower() and "LOADED" not in res.output:
        raise Refuted(f"4.35.2 did not take the FlashAttention-2 path: {_last_error(res)}")
