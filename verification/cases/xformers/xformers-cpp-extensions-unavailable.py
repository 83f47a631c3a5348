"""xformers whose C++ extension was built for another torch: importing it logs
'WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions ...' and goes on without its kernels.

xformers 0.0.28.post3 (built for torch 2.5.1) is imported next to the device's torch 2.11 in a
child process (verification/cases/_xformers_wheels.py); what it logged on the `xformers` logger is
logged again here, word for word, so the case checks the line the user sees. Fix 2 (xformers built
for the torch installed) has no step: PyPI has no such build for torch 2.11 (xformers 0.0.35,
the newest, is built for 2.10.0+cu128 and logs the same warning next to 2.11: H200 run of
2026-12-02). Fix 3 (PyTorch's own SDPA instead) must give the right numbers."""

from verification.cases import _xformers_wheels as xf
from verification.cases._common import TOL, ref_attention
from verification.cases.xformers import _mslk as m

BACKEND = "sdpa"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["torch"]}
TIMEOUT = 600
LOGGER = "xformers"


def reproduce(ctx):
    def import_old_xformers():
        child = xf.run_child(ctx, "old", "import torch\nimport xformers.ops\n")
        ctx.note("child: " + xf.describe(child))
        m.relog(child.stderr)

    ctx.expect_logged(LOGGER, import_old_xformers)



def fix_3(ctx):
    """Fix 3: without xformers, PyTorch's scaled_dot_product_attention computes the same attention."""
    t = ctx.torch
    q, k, v = (t.randn(2, 4, 128, 64, device=ctx.device, dtype=t.float16) for _ in range(3))
    out = ctx.call(t.nn.functional.scaled_dot_product_attention, q, k, v)
    ctx.close(out, ref_attention(q.float(), k.float(), v.float(), layout="bhsd"), **TOL)
