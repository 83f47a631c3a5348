"""diffusers imports `_wrapped_flash_attn_forward/_backward` from flash_attn.flash_attn_interface,
which flash-attn 2.6.3 (and forks) lack: "cannot import name '_wrapped_flash_attn_backward' from
'flash_attn.flash_attn_interface'".

Environment: this Python with a CPU-only torch (2.13.0+cpu, `_builds.with_cpu_torch`); flash-attn
2.6.3 and 2.7.0.post2 (PyPI's first 2.7 release) as wheels built from their PyPI sdists with FLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE
(the Python package and its metadata, which diffusers' version check reads), each installed with
pip --target; diffusers 0.36.0, 0.37.0 and 0.35.2 likewise. Both flash-attn releases import their
compiled flash_attn_2_cuda at the top of the interface and neither has a Triton backend, so in the
child processes that module is replaced by an errkb stand-in when it does not import (importing
works, calling it raises; nothing here calls it). What is under test, which names the interface
module defines, is flash-attn's own Python file.

Reproduce: `import diffusers.models.attention_dispatch` (what every diffusers model and pipeline
imports) with diffusers 0.36.0 and flash-attn 2.6.3 raises the record's ImportError; the step notes
what plain `import diffusers` does. Fix 1: with 2.7.0.post2 the fix's check prints ok and the same diffusers
import works. Fix 2: diffusers 0.37.0 with 2.6.3 logs its fallback warning (the record's message
inside it) and dispatch_attention_fn runs natively on the CPU against an fp32 reference; 0.35.2 does
not import the helpers at all. The V100 fork of the record is not on PyPI and is not run."""

import re

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
OLD, NEW = "2.6.3", "2.7.0.post2"  # PyPI has no 2.7.0; 2.7.0.post2 is the first 2.7 release there
DIFFUSERS_UNGUARDED, DIFFUSERS_GUARDED, DIFFUSERS_BEFORE = "diffusers==0.36.0", "diffusers==0.37.0", "diffusers==0.35.2"
# the stand-in, only where the real compiled module does not import (errkb.verify.standin)
STANDIN = _venv.standin_preamble("flash_attn_2_cuda")
VERSIONS = ("import importlib.metadata as md\n"
            "def _v(d):\n    try:\n        return md.version(d)\n    except md.PackageNotFoundError:\n        return '-'\n"
            "print('VERSIONS', _v('flash-attn'), _v('diffusers'), flush=True)\n")
DISPATCH = "import diffusers.models.attention_dispatch\nprint('IMPORTED', flush=True)\n"
FIX_1 = ("from flash_attn.flash_attn_interface import _wrapped_flash_attn_forward, _wrapped_flash_attn_backward; "
         "print('ok')\n")
NATIVE = r'''
import torch
from diffusers.models.attention_dispatch import dispatch_attention_fn
torch.manual_seed(0)
q, k, v = (torch.randn(1, 8, 2, 16) for _ in range(3))  # (batch, seq, heads, dim), diffusers' layout
out = dispatch_attention_fn(q, k, v)
qt, kt, vt = (t.double().transpose(1, 2) for t in (q, k, v))
ref = (torch.softmax(qt @ kt.transpose(-1, -2) / 4.0, -1) @ vt).transpose(1, 2)
print("maxerr", (out.double() - ref).abs().max().item())
'''


def _folders(ctx, flash_attn: str, diffusers: str | None) -> list[str]:
    env = b.with_cpu_torch(ctx)
    wheel = b.flash_attn_python_wheel(ctx, flash_attn, env=env)
    path = [b.target_dir(ctx, wheel, no_deps=True, env=env)]
    if diffusers:
        path.insert(0, b.target_dir(ctx, diffusers, env=env))
    return path


def _run(ctx, flash_attn: str, diffusers: str | None, code: str) -> _venv.Run:
    env = b.with_cpu_torch(ctx)
    res = b.run_with_torch(ctx, STANDIN + VERSIONS + code, path=_folders(ctx, flash_attn, diffusers), env=env)
    versions = next((l.split()[1:] for l in res.output.splitlines() if l.startswith("VERSIONS ")), None)
    causes = _venv.exception_lines(res.output)
    ctx.note(f"flash-attn {versions[0] if versions else flash_attn}, {diffusers or 'no diffusers'}"
             + (" (flash_attn_2_cuda stood in)" if "STANDIN flash_attn_2_cuda" in res.output else "")
             + f": `{code.strip().splitlines()[0][:70]}`: "
             + (f"{causes[-1][0]}: {causes[-1][1][:240]}" if causes else f"exit {res.returncode}"))
    if versions is None:
        raise RuntimeError(f"the child did not get as far as reading versions: {res.tail(600)}")
    return res


def reproduce(ctx):
    _run(ctx, OLD, DIFFUSERS_UNGUARDED, "import diffusers\nprint(diffusers.__version__)\n")
    res = _run(ctx, OLD, DIFFUSERS_UNGUARDED, DISPATCH)
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    check = _run(ctx, NEW, None, FIX_1)
    dispatch = _run(ctx, NEW, DIFFUSERS_UNGUARDED, DISPATCH)

    def imports():
        for res in (check, dispatch):
            _venv.reraise(res.output)
            if not re.search(r"^(ok|IMPORTED)$", res.output, re.M):
                raise AssertionError(res.tail(400))

    ctx.call(imports)


def fix_2(ctx):
    guarded = _run(ctx, OLD, DIFFUSERS_GUARDED, NATIVE)
    before = _run(ctx, OLD, DIFFUSERS_BEFORE, DISPATCH)
    warning = next((l.strip() for l in guarded.output.splitlines() if "failed to import" in l), None)
    ctx.note(f"{DIFFUSERS_GUARDED} logged: {warning[:300] if warning else 'nothing about flash_attn'}")

    def falls_back():
        for res in (guarded, before):
            _venv.reraise(res.output)
        if "IMPORTED" not in before.output:
            raise AssertionError(before.tail(400))
        if not warning or not _venv.tool_message(warning, ctx.record["template"]):
            raise AssertionError(f"{DIFFUSERS_GUARDED} did not log the fallback with the record's message")
        return float(_venv.printed(guarded, "maxerr ").split()[1])

    err = ctx.call(falls_back)
    ctx.close([err], [0.0], atol=1e-5, what="diffusers' native attention (fp32) against a float64 reference")
