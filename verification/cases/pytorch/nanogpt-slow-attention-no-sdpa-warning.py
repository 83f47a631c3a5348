"""nanoGPT's CausalSelfAttention prints 'WARNING: using slow attention. Flash Attention ...' when it will not
use scaled_dot_product_attention (SDPA).

nanoGPT's model.py is read from karpathy/nanoGPT at three commits, exported from a local clone
(verification/cases/_downstream.py; nothing of it is committed, nothing is stood in): 1e87509 (2023-02-02,
the record's wording, SDPA off when torch lacks it *or* dropout != 0.0), 6170531 (2023-03-05, the torch-only
condition) and 3adf61e (2025-11-12, the newest commit read). Environment: with_cpu_torch() (torch 2.13.0+cpu,
local wheel). A child Python builds a tiny GPT (2 layers, 2 heads, width 32, block 16, vocabulary 64) and
reports what model.py printed and which path each attention layer took.

Only the dropout half of the trigger can run here: torch 2.13 has SDPA, and no torch older than 2.0 is
cached (a pretended missing SDPA is no verdict), so the torch < 2.0 condition is not shown.

Reproduce: 1e87509 with dropout=0.1 prints the record's line once per layer. Fix 1 (informational): at
1e87509 the manual path (dropout=0.1 model, in eval mode) and the SDPA path (dropout=0.0 model with the same
weights) give the same logits within fp32 rounding, and both are within rounding of a float64 run of the
manual model. Fix 2: the torch >= 2.0 half only: 3adf61e on torch 2.13 with dropout=0.1 prints nothing and
uses SDPA (the torch < 2.0 starting point needs an old torch). Fix 3: 6170531 with dropout=0.1 prints
nothing, uses SDPA and runs a training step (forward with targets, backward) with a finite loss."""

from verification.cases import _builds as b
from verification.cases import _downstream, _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 900
REPO = "karpathy/nanoGPT"
COMMITS = {"1e87509": "1e87509", "6170531": "6170531", "3adf61e": "3adf61e"}

CHILD = r"""
import sys, torch
sys.path.insert(0, {root!r})
import model as M
torch.manual_seed(0)
cfg = dict(n_layer=2, n_head=2, n_embd=32, block_size=16, vocab_size=64, bias=True)
print('ERRKB-BUILD dropout=0.1', flush=True)
slow = M.GPT(M.GPTConfig(dropout=0.1, **cfg))
print('ERRKB-FLASH', [blk.attn.flash for blk in slow.transformer.h], flush=True)
idx = torch.randint(0, 64, (2, 16))
slow.train()
logits, loss = slow(idx, targets=idx)
loss.backward()
print('ERRKB-TRAIN loss', float(loss), bool(torch.isfinite(loss)), flush=True)
if {compare}:
    print('ERRKB-BUILD dropout=0.0', flush=True)
    fast = M.GPT(M.GPTConfig(dropout=0.0, **cfg))
    print('ERRKB-FLASH0', [blk.attn.flash for blk in fast.transformer.h], flush=True)
    missing = fast.load_state_dict(slow.state_dict(), strict=False)
    print('ERRKB-LOAD', missing.missing_keys, len(missing.unexpected_keys), flush=True)
    slow.eval(); fast.eval()
    with torch.no_grad():
        a, _ = slow(idx, targets=idx)
        c, _ = fast(idx, targets=idx)
        ref, _ = slow.double()(idx, targets=idx)
    print('ERRKB-DIFF', float((a - c).abs().max()), float((a.double() - ref).abs().max()),
          float((c.double() - ref).abs().max()), flush=True)
"""


def _run(ctx, commit: str, compare: bool = False) -> _venv.Run:
    root = _downstream.tree(ctx, REPO, COMMITS[commit], ("model.py",))
    env = b.with_cpu_torch(ctx)
    _venv.noted(ctx, env)
    res = b.run_with_torch(ctx, CHILD.format(root=str(root), compare=compare), env=env)
    lines = [l for l in res.output.splitlines() if l.startswith(("ERRKB-", "WARNING"))]
    ctx.note(f"nanoGPT model.py at {commit}: " + " | ".join(lines)[:600])
    if "ERRKB-TRAIN" not in res.output:
        _venv.reraise(res.output)
        raise AssertionError(f"the tiny GPT did not run: {res.tail(400)}")
    return res


def _count(res) -> int:
    return sum(1 for l in res.output.splitlines() if l.startswith("WARNING: using slow attention"))


def reproduce(ctx):
    res = _run(ctx, "1e87509")

    def printed():
        if "ERRKB-FLASH [False, False]" not in res.output or _count(res) != 2:
            raise AssertionError(f"expected the line once per layer and the manual path: {res.tail(400)}")
        _venv.raise_tool_message("print", res.output, ctx.record["template"])
    ctx.expect_error(printed)


def fix_1(ctx):
    res = _run(ctx, "1e87509", compare=True)
    line = next(l for l in res.output.splitlines() if l.startswith("ERRKB-DIFF"))
    manual_vs_sdpa, manual_vs_fp64, sdpa_vs_fp64 = map(float, line.split()[1:])
    ctx.note(f"eval logits: manual vs SDPA {manual_vs_sdpa:.2e}, manual vs float64 {manual_vs_fp64:.2e}, "
             f"SDPA vs float64 {sdpa_vs_fp64:.2e} (tolerance 1e-4)")

    def same():
        if "ERRKB-FLASH0 [True, True]" not in res.output:
            raise AssertionError(f"the dropout=0.0 model did not take SDPA: {res.tail(300)}")
        if max(manual_vs_sdpa, manual_vs_fp64, sdpa_vs_fp64) > 1e-4:
            raise AssertionError(f"the two paths disagree: {line}")
        if "True" not in next(l for l in res.output.splitlines() if l.startswith("ERRKB-TRAIN")):
            raise AssertionError("the manual path's training step gave a non-finite loss")
    ctx.call(same)


def _no_line(ctx, commit: str):
    res = _run(ctx, commit)

    def quiet():
        _venv.raise_tool_message("print", res.output, ctx.record["template"])
        if "ERRKB-FLASH [True, True]" not in res.output:
            raise AssertionError(f"SDPA was not chosen: {res.tail(300)}")
        if "True" not in next(l for l in res.output.splitlines() if l.startswith("ERRKB-TRAIN")):
            raise AssertionError("the training step gave a non-finite loss")
    ctx.call(quiet)


def fix_2(ctx):
    ctx.note("only the torch >= 2.0 side: torch 2.13.0+cpu; the torch < 2.0 starting point needs an older torch, "
             "not available here")
    _no_line(ctx, "3adf61e")


def fix_3(ctx):
    _no_line(ctx, "6170531")
