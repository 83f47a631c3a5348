"""`from torch.nn.attention.flex_attention import ...` on a torch older than 2.5.0:
"No module named 'torch.nn.attention.flex_attention'".

Environments: torch 2.4.1 and 2.5.0, PyPI's Linux wheels (CUDA 12.1 / 12.4 builds, which import on a
CPU machine), each installed by uv 0.9.0 into an environment of its own with the dependencies the
wheel declares (no numpy: torch only warns), and torch 2.14.1 (PyPI, the with_torch environment).
download.pytorch.org's CPU wheels are out of reach from this machine.

Reproduce: on 2.4.1 the record's import, run in a child, raises the message; the step notes what
torch/nn/attention/ holds there (_flex_attention.py, no flex_attention.py). Fix 1: on 2.5.0 (the
first release the record names) and on 2.14.1 the fix's check imports flex_attention and
create_block_mask, and a causal block mask made with create_block_mask runs through flex_attention
eagerly on the CPU, matching an fp32 reference computed in the same child. Fix 2: on 2.4.1 the fix's
command prints the private prototype function, and the module has no create_block_mask (what the
fix's explanation says)."""

import re

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
OLD = "torch==2.4.1"
FIRST = "torch==2.5.0"
REPRODUCE = ("import torch; print(torch.__version__)\n"
             "from torch.nn.attention.flex_attention import flex_attention, create_block_mask")
LISTING = ("import os, torch.nn.attention as a\n"
           "print('files', sorted(f for f in os.listdir(os.path.dirname(a.__file__)) if f.endswith('.py')))")
FIX_1 = '''
import torch
from torch.nn.attention.flex_attention import flex_attention, create_block_mask
print("ok")
torch.manual_seed(0)
q, k, v = (torch.randn(1, 2, 128, 16) for _ in range(3))
mask = create_block_mask(lambda b, h, qi, ki: qi >= ki, None, None, 128, 128, device="cpu")
out = flex_attention(q, k, v, block_mask=mask)
s = (q @ k.transpose(-1, -2) / 4.0).masked_fill(torch.ones(128, 128, dtype=torch.bool).triu(1), float("-inf"))
ref = torch.softmax(s, -1) @ v
print(torch.__version__, "maxerr", (out - ref).abs().max().item())
'''
FIX_2 = "import torch.nn.attention._flex_attention as f; print(f._flex_attention)"


def _env(ctx, requirement):
    tool, env = b.uv_env(ctx, requirement.replace("==", "-"), requirement)
    return env


def reproduce(ctx):
    env = _env(ctx, OLD)
    res = env.python_run(REPRODUCE)
    version = next((l for l in res.output.splitlines() if re.match(r"\d+\.\d+\.\d+", l)), "?")
    ctx.note(f"torch {version}: " + res.summary().split(": ", 1)[-1])
    listing = env.python_run(LISTING)
    ctx.note("torch/nn/attention/ holds: " + next((l for l in listing.output.splitlines() if l.startswith("files")), listing.tail(200)))
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def _runs_flex(ctx, res, where):
    _venv.reraise(res.output)
    m = re.search(r"(\S+) maxerr (\S+)", res.output)
    if "ok" not in res.output.split() or not m:
        raise AssertionError(res.tail(500))
    ctx.note(f"{where}: torch {m.group(1)}, create_block_mask + flex_attention (eager, CPU), "
             f"max error vs fp32 reference {m.group(2)}")
    return float(m.group(2))


def fix_1(ctx):
    first = _env(ctx, FIRST).python_run(FIX_1)
    err_first = ctx.call(_runs_flex, ctx, first, "first release named by the fix (uv)")
    new = b.run_with_torch(ctx, FIX_1)
    err_new = ctx.call(_runs_flex, ctx, new, "with_torch environment")
    ctx.close([err_first, err_new], [0.0, 0.0], atol=1e-5, what="flex_attention against an fp32 reference")


def fix_2(ctx):
    env = _env(ctx, OLD)
    res = env.python_run(FIX_2)
    probe = env.python_run("import torch.nn.attention._flex_attention as f; print('has create_block_mask', hasattr(f, 'create_block_mask'))")

    def prints_prototype():
        _venv.reraise(res.output)
        if "<function _flex_attention" not in res.output:
            raise AssertionError(res.tail(300))
        if "has create_block_mask False" not in probe.output:
            raise AssertionError(f"the 2.4 prototype has create_block_mask: {probe.tail(300)}")
        ctx.note("torch 2.4.1: " + next(l for l in res.output.splitlines() if "<function _flex_attention" in l)
                 + "; no create_block_mask in that module")

    ctx.call(prints_prototype)
