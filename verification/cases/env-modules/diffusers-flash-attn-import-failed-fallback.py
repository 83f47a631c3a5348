"""diffusers finds a flash_attn distribution whose import fails, warns 'flash_attn is installed but
failed to import: <error>. Falling back to native PyTorch attention.' and carries on.

Reproduce: diffusers 0.42.1 (PyPI, pip --target) next to torch 2.14.1 (PyPI), and flash-attn 2.8.3
built from its sdist with FLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE (flash-attn's own switch: the
package and its 2.8.3 metadata are installed, the compiled flash_attn_2_cuda is not, as after a
build for another machine or a lost extension). `import diffusers.models.attention_dispatch` in a
child logs the line (diffusers' logger prints it to stderr; it is logged again here under the
module's logger name). Fix 1: the fix's two commands, with the same packages, end on the same
cause, `No module named 'flash_attn_2_cuda'` (the first command cannot print the version: flash_attn's
__init__ imports the extension). Fix 2: with the fallback, diffusers' dispatch_attention_fn runs
on the CPU and matches an fp32 reference."""

import logging

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
DIFFUSERS = "diffusers==0.42.1"
LOGGER = "diffusers.models.attention_dispatch"
FIX_1 = ["import flash_attn; print(flash_attn.__version__, flash_attn.__file__)",
         "from flash_attn.flash_attn_interface import _wrapped_flash_attn_forward, _wrapped_flash_attn_backward"]
FIX_2 = r'''
import torch
from diffusers.models.attention_dispatch import dispatch_attention_fn
torch.manual_seed(0)
q, k, v = (torch.randn(1, 8, 2, 16) for _ in range(3))  # (batch, seq, heads, dim), diffusers' layout
out = dispatch_attention_fn(q, k, v)
qt, kt, vt = (t.transpose(1, 2) for t in (q, k, v))
ref = (torch.softmax(qt @ kt.transpose(-1, -2) / 4.0, -1) @ vt).transpose(1, 2)
print("maxerr", (out - ref).abs().max().item())
'''


def _broken_flash_attn(ctx) -> str:
    folder = _venv._tmp_root() / "target-flash-attn-2.8.3-skip-cuda-build"
    stamp = folder / ".errkb-done"
    if not stamp.exists():
        env = b.with_torch(ctx)
        res = env.pip("install", "--no-build-isolation", "--no-deps", "--target", folder, b.FLASH_ATTN, timeout=900,
                      env=_venv.tool_env(VIRTUAL_ENV=str(env.path), FLASH_ATTENTION_SKIP_CUDA_BUILD="TRUE"))
        if res.returncode != 0:
            ctx.skip(f"could not build flash-attn with FLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE: {res.tail(400)}")
        stamp.write_text("ok")
    ctx.note("flash-attn 2.8.3 built with FLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE (no flash_attn_2_cuda), pip --target")
    return str(folder)


def _path(ctx):
    return [b.target_dir(ctx, DIFFUSERS), _broken_flash_attn(ctx)]


def reproduce(ctx):
    res = b.run_with_torch(ctx, "import diffusers.models.attention_dispatch", path=_path(ctx))
    ctx.note(res.summary())
    line = next((l.strip() for l in res.output.splitlines() if "flash_attn is installed but failed to import" in l), None)

    def log_again():
        if line:
            logging.getLogger(LOGGER).warning(line)
        _venv.reraise(res.output)

    ctx.expect_logged(LOGGER, log_again)


def fix_1(ctx):
    path = _path(ctx)
    outs = [b.run_with_torch(ctx, code, path=path) for code in FIX_1]

    def names_cause():
        for code, res in zip(FIX_1, outs):
            causes = _venv.exception_lines(res.output)
            if not causes or "flash_attn_2_cuda" not in causes[-1][1]:
                raise AssertionError(f"{code!r} did not name the cause: {res.tail(300)}")
            ctx.note(f"`python -c {code[:40]!r}...`: {causes[-1][0]}: {causes[-1][1]}")

    ctx.call(names_cause)


def fix_2(ctx):
    res = b.run_with_torch(ctx, FIX_2, path=_path(ctx))
    err = float(ctx.call(_venv.printed, res, "maxerr ").split()[1])
    ctx.close([err], [0.0], atol=1e-5, what="diffusers' native attention against an fp32 reference")
