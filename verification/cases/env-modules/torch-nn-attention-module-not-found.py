"""`from torch.nn.attention import sdpa_kernel, SDPBackend` on a torch without that module:
'No module named 'torch.nn.attention''.

Reproduce: torch 2.2.2 from PyPI (its CUDA wheel, which imports on a CPU machine; with numpy<2, installed by
uv 0.9.0 into an environment of its own), the import run in a child. The 2.2.2 wheel has no
torch/nn/attention/ at all (its file list). Fix 1: on torch 2.14.1 (PyPI; the fix's cu121 index is
not reachable from here, and the claim is about the release) the fix's check command prints
sdpa_kernel. Fix 2: on torch 2.2.2 the old context manager exists and SDPA runs under it on the
CPU, matching an fp32 reference computed in the same child; which kernel its flags pick on a GPU is
not checked here (they select CUDA kernels)."""

import re

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
OLD = "torch==2.2.2"
FIX_2 = ("import torch, torch.nn.functional as F; torch.manual_seed(0)\n"
         "q, k, v = (torch.randn(1, 2, 8, 16) for _ in range(3))\n"
         "with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):\n"
         "    out = F.scaled_dot_product_attention(q, k, v)\n"
         "ref = torch.softmax(q @ k.transpose(-1, -2) / 4.0, -1) @ v\n"
         "print(torch.__version__, 'maxerr', (out - ref).abs().max().item())")


def _old(ctx):
    tool, env = b.uv_env(ctx, "torch-2.2.2", OLD, "numpy<2")  # 2.2.2 was built against NumPy 1.x
    return env


def reproduce(ctx):
    env = _old(ctx)
    res = env.python_run("import torch; print(torch.__version__); from torch.nn.attention import sdpa_kernel, SDPBackend")
    version = next((l for l in res.output.splitlines() if re.match(r"\d+\.\d+\.\d+", l)), "?")
    ctx.note(f"torch {version}: " + res.summary().split(": ", 1)[-1])
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    res = b.run_with_torch(ctx, "import torch, torch.nn.attention as a; print(torch.__version__, a.sdpa_kernel)")

    def imports():
        _venv.reraise(res.output)
        if "sdpa_kernel" not in res.output:
            raise AssertionError(res.tail(300))
        ctx.note(next(l for l in res.output.splitlines() if "sdpa_kernel" in l)[:200])

    ctx.call(imports)


def fix_2(ctx):
    env = _old(ctx)
    res = env.python_run(FIX_2)

    def runs():
        _venv.reraise(res.output)
        m = re.search(r"(\S+) maxerr (\S+)", res.output)
        if not m or not m.group(1).startswith("2.2.2") or float(m.group(2)) > 1e-5:
            raise AssertionError(res.tail(400))
        ctx.note(f"torch {m.group(1)}, CPU: SDPA under torch.backends.cuda.sdp_kernel, max error vs fp32 reference {m.group(2)}")

    ctx.call(runs)
