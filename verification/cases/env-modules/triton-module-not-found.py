"""`import triton` where no triton is installed: 'No module named 'triton''.

Reproduce: a new environment (CPython 3.11, pip 26.3, nothing else), `python -c "import triton"`; and
the record's Linux situation, torch installed and triton removed (torch 2.14.1 from PyPI installed by
uv 0.9.0, then `uv pip uninstall triton`). Fix 1 as written, in that environment: the command reads
torch's triton pin from its metadata, that exact triton is installed, `import triton` works and its
version is the pin (torch 2.14.1 declares a compatible-release range, `triton~=3.8.0`, not an
exact version: the spec is installed as printed). Fix 2 is for Windows. Fix 3: without triton, plain SDPA still runs (CPU) and
matches an fp32 reference computed in the same child."""

import re

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1500
READ_PIN = "import importlib.metadata as m; print([r for r in m.requires('torch') if r.startswith('triton')])"
SDPA = ("import torch, torch.nn.functional as F; torch.manual_seed(0)\n"
        "q, k, v = (torch.randn(1, 2, 8, 16) for _ in range(3))\n"
        "ref = torch.softmax(q @ k.transpose(-1, -2) / 4.0, -1) @ v\n"
        "print('maxerr', (F.scaled_dot_product_attention(q, k, v) - ref).abs().max().item())")


def _without_triton(ctx):
    tool, env = b.uv_env(ctx, "torch-no-triton", *b.torch_requirement())
    res = b.uv_pip(tool, env, "uninstall", "triton")
    ctx.note("uv pip uninstall triton: " + (res.output.strip().splitlines() or [""])[-1][:200])
    return tool, env


def reproduce(ctx):
    b.fresh_import_refused(ctx, "import triton")
    tool, env = _without_triton(ctx)
    res = env.python_run("import torch; import triton")
    ctx.note("torch installed, triton removed: " + res.summary().split(": ", 1)[-1])
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    tool, env = _without_triton(ctx)
    pin_out = env.python_run(READ_PIN)
    pins = re.findall(r"triton\s*(==|~=)\s*([\w.]+)", pin_out.output)  # 2.14.1 declares triton~=3.8.0
    if not pins:
        raise AssertionError(f"the fix's command printed no triton pin: {pin_out.tail(300)}")
    ctx.note(f"the fix's command printed {pin_out.output.strip()[:200]}")
    op, pin = pins[0]
    inst = b.uv_pip(tool, env, "install", f"triton{op}{pin}")
    res = env.python_run("import torch, triton; print('triton', triton.__version__)")

    def works():
        _venv.reraise(res.output, ctx.record["template"])
        got = re.search(r"triton (\S+)", res.output)
        want = pin if op == "==" else pin.rsplit(".", 1)[0] + "."
        if not got or not (got.group(1) == pin or (op == "~=" and got.group(1).startswith(want))):
            raise AssertionError(f"{inst.tail(300)}\n{res.tail(300)}")
        ctx.note(f"installed triton{op}{pin} with uv; {res.output.strip()}")

    ctx.call(works)
    b.uv_pip(tool, env, "uninstall", "triton")  # the environment is kept for the other steps: back to no triton


def fix_2(ctx):
    ctx.skip("triton-windows is for Windows")


def fix_3(ctx):
    tool, env = _without_triton(ctx)
    res = env.python_run("import importlib.util as u; assert u.find_spec('triton') is None\n" + SDPA)

    def runs():
        _venv.reraise(res.output)
        m = re.search(r"maxerr (\S+)", res.output)
        if not m or float(m.group(1)) > 1e-5:
            raise AssertionError(res.tail(400))
        ctx.note(f"no triton; SDPA on the CPU vs fp32 reference: max error {m.group(1)}")

    ctx.call(runs)
