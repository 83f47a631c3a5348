"""transformers refuses an attention implementation the installed torch is too old for: "PyTorch SDPA
requirements in Transformers are not met. Please install torch>=2.1.1." (and the flex_attention
variant, torch>=2.5.0).

The gate reads torch's version before any kernel runs, so a CPU decides it. Each (torch,
transformers) pair is an environment of its own made by uv 0.9.0 (this Python) with PyPI's torch
(CUDA builds, which import on this GPU-less machine) and numpy<2 for the old ones; the model is the
two-layer Llama of _tiny_llama.py, saved from a config made in code and loaded with
from_pretrained(..., attn_implementation=...) in a child process. Nothing is stood in or patched.

Reproduce: sdpa on torch 2.0.1 with transformers 4.36.2, 4.46.3 and 4.49.0; flex_attention on torch
2.4.1 with 4.51.3 and 4.57.3: each load raises the record's ImportError. The step also notes what
4.50.0 and 4.51.3 do on torch 2.0.1: they stop before the gate, on torch.compiler (added in torch 2.1). Fix 1 (upgrade torch): the
same loads on torch 2.5.1 pass the gate (the note says whether a forward pass then runs on the CPU).
Fix 2 (an implementation the torch supports): sdpa on torch 2.4.1 with 4.51.3 and 4.57.3 loads and its
logits match eager's."""

from verification.cases import _builds as b
from verification.cases import _tiny_llama as llama
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 2400
SDPA_OLD = ("torch==2.0.1", ["transformers==4.36.2", "transformers==4.46.3", "transformers==4.49.0"])
# from 4.50.0 modeling_utils imports integrations/flex_attention.py, whose class body calls torch.compiler (torch 2.1+)
SDPA_PREEMPTED = ["transformers==4.50.0", "transformers==4.51.3"]
FLEX_OLD = ("torch==2.4.1", ["transformers==4.51.3", "transformers==4.57.3"])
NEW_TORCH = "torch==2.5.1"
FORWARD = ("out = m(torch.randint(0, 128, (1, 16))).logits\n"
           "print('FORWARD', tuple(out.shape), bool(torch.isfinite(out).all()), flush=True)\n")


def _env(ctx, torch: str, transformers: str) -> _venv.Venv:
    extra = ["numpy<2"] if torch == "torch==2.0.1" else ["numpy"]
    key = f"{torch}-{transformers}".replace("==", "-")
    _, env = b.uv_env(ctx, key, torch, *extra, transformers)
    return env


def _load(ctx, torch: str, transformers: str, impl: str, after: str = "") -> _venv.Run:
    code = (llama.LOG_TAP + llama.MODEL + f'm = AutoModelForCausalLM.from_pretrained(folder, attn_implementation="{impl}")\n'
            "print('LOADED', m.config._attn_implementation, m.dtype, flush=True)\n" + after)
    res = _env(ctx, torch, transformers).python_run(code, HF_HUB_OFFLINE="1", timeout=600)
    forward = next((l for l in res.output.splitlines() if l.startswith("FORWARD ")), None)
    ctx.note(f"{transformers} on {torch}, attn_implementation={impl!r}: {llama.outcome(res)}"
             + (f"; {forward}" if forward else ""))
    return res


def reproduce(ctx):
    runs = {}
    for torch, releases in (SDPA_OLD, FLEX_OLD):
        impl = "sdpa" if torch == SDPA_OLD[0] else "flex_attention"
        for rel in releases:
            runs[f"{rel} on {torch} ({impl})"] = _load(ctx, torch, rel, impl)
    for rel in SDPA_PREEMPTED:
        res = _load(ctx, SDPA_OLD[0], rel, "sdpa")
        if _venv.tool_message(res.output, ctx.record["template"]):
            ctx.note(f"{rel} on {SDPA_OLD[0]} reached the gate after all")
    llama.each_release(ctx, runs)
    ctx.expect_error(_venv.reraise, runs[next(iter(runs))].output, ctx.record["template"])


def _passes_gate(ctx, res: _venv.Run) -> None:
    _venv.reraise(res.output, ctx.record["template"])
    if not any(l.startswith("LOADED ") for l in res.output.splitlines()):
        _venv.reraise(res.output)
        raise AssertionError(f"the model did not load: {res.tail(500)}")


def fix_1(ctx):
    runs = [_load(ctx, NEW_TORCH, SDPA_OLD[1][0], "sdpa", FORWARD)]
    runs += [_load(ctx, NEW_TORCH, rel, "flex_attention", FORWARD) for rel in FLEX_OLD[1]]
    for res in runs:
        ctx.call(_passes_gate, ctx, res)


def fix_2(ctx):
    code = llama.SDPA_AGAINST_EAGER
    diffs = []
    for rel in FLEX_OLD[1]:
        res = _env(ctx, FLEX_OLD[0], rel).python_run(code, HF_HUB_OFFLINE="1", timeout=600)
        ctx.note(f"{rel} on {FLEX_OLD[0]}, sdpa and eager: {res.summary().split(': ', 1)[-1]}")
        diffs.append(ctx.call(llama.logit_diff, ctx, res))
    ctx.close(diffs, [0.0] * len(diffs), atol=1e-4, what="sdpa logits against eager")
