"""PyTorch 1.x has no torch.nn.functional.scaled_dot_product_attention: the attribute lookup fails.

The reproduce step needs a 1.x torch (run on 1.13.1, the last 1.x release, in a Python 3.10
environment of its own); it also runs the same lookup in a child process of that interpreter to
see the traceback Python itself prints (the "Did you mean" hint of Python 3.10+), and notes
whether the private `_scaled_dot_product_attention` the hint names is there. Fix 1's command runs
anywhere. Fix 2 (torch 2.1 or newer) calls the public function; fix 3's fallback runs on any torch
and is compared with the reference, on the path its `getattr` picks and on the fallback itself."""

import subprocess
import sys

from errkb.verify.case import Refuted
from verification.cases._common import ref_attention

BACKEND = "sdpa"
REQUIRES = {"packages": ["torch"]}
STEP_REQUIRES = {"reproduce": {"torch": "<2.0"}, "fix_2": {"torch": ">=2.1"}}
TIMEOUT = 120
FP32 = {"atol": 1e-4, "rtol": 1e-4}


def _lookup():
    import torch.nn.functional as F

    return F.scaled_dot_product_attention


def _qkv(ctx):
    t = ctx.torch
    return tuple(t.randn(2, 4, 16, 32) for _ in range(3))


def reproduce(ctx):
    import torch.nn.functional as F

    ctx.expect_error(_lookup)
    ctx.note(f"torch.nn.functional._scaled_dot_product_attention present: {hasattr(F, '_scaled_dot_product_attention')}")
    child = subprocess.run([sys.executable, "-c", "import torch.nn.functional as F\nF.scaled_dot_product_attention"],
                           capture_output=True, text=True, timeout=120)
    last = (child.stderr.strip().splitlines() or ["(no output)"])[-1]
    ctx.note(f"Python {sys.version.split()[0]} prints: {last}")


def fix_1(ctx):
    """The diagnostic command, with this interpreter: it prints the version and where torch lives."""
    t = ctx.torch
    cmd = [sys.executable, "-c", "import torch; print(torch.__version__, torch.__file__)"]
    child = ctx.call(subprocess.run, cmd, capture_output=True, text=True, timeout=120)
    line = child.stdout.strip()
    if child.returncode != 0 or not line.startswith(t.__version__ + " ") or not line.endswith("__init__.py"):
        raise Refuted(f"the command printed {line!r} (exit {child.returncode}; this process has torch {t.__version__})")
    ctx.note(f"prints: {line}")


def fix_2(ctx):
    """On torch 2.1+: the public function exists and gives plain attention."""
    q, k, v = _qkv(ctx)
    sdpa = ctx.call(_lookup)
    out = ctx.call(sdpa, q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **FP32)


def _sdpa_fallback(q, k, v, attn_mask=None):
    """Fix 3's fallback, as the record writes it."""
    import torch

    scores = q @ k.transpose(-2, -1) * q.size(-1) ** -0.5
    if attn_mask is not None:
        scores = (scores.masked_fill(~attn_mask, float("-inf")) if attn_mask.dtype == torch.bool
                  else scores + attn_mask)
    return scores.softmax(dim=-1) @ v


def fix_3(ctx):
    """The fallback (what `getattr(F, ..., None) or sdpa_fallback` picks here, then the fallback
    itself), with no mask, a boolean padding mask and an additive one."""
    import torch.nn.functional as F

    t = ctx.torch
    q, k, v = _qkv(ctx)
    keep = t.ones(16, 16, dtype=t.bool)
    keep[:, 12:] = False
    additive = t.zeros(16, 16).masked_fill(~keep, float("-inf"))
    picked = getattr(F, "scaled_dot_product_attention", None) or _sdpa_fallback
    ctx.note(f"torch {t.__version__}: the getattr picks {'the fallback' if picked is _sdpa_fallback else 'PyTorch SDPA'}")
    for fn in dict.fromkeys([picked, _sdpa_fallback]):
        for mask in (None, keep, additive):
            out = ctx.call(fn, q, k, v, attn_mask=mask)
            ctx.close(out, ref_attention(q, k, v, layout="bhsd", mask=mask), **FP32)
