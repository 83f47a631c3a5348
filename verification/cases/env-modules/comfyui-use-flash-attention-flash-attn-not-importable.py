"""ComfyUI started with --use-flash-attention where `from flash_attn import flash_attn_func` raises
ImportError: it logs 'To use the `--use-flash-attention` feature, the `flash-attn` package must be
installed first.' (with the pip command for its own interpreter) and exits with status 255 (exit(-1)).

Environment: verification/cases/_comfyui.py (torch 2.13.0+cpu and the ComfyUI requirements `comfy`
imports; ComfyUI's `comfy` package at commit a125cd84 of 2025-10-12, the newest in the local clone; the
record cites 05080f6, which the clone does not hold: the lines are the same since 7aceb9f9, 2025-03-14,
which added the flag). A child starts the way main.py does (`--cpu --use-flash-attention` parsed by
comfy.cli_args) and imports comfy.ldm.modules.attention, where the check sits; a tap on the root logger
prints what ComfyUI logs.

Reproduce: with flash-attn absent, the import logs the record's message at ERROR and the process exits
with 255. The same happens with flash-attn 2.8.3 installed but broken (built from its sdist with
FLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE, so its import fails on flash_attn_2_cuda): the message says
"must be installed first" for an installed package, as the record's meaning says (noted). Fix 1: the
fix's command, run with the interpreter the message names, shows the real cause of the broken install
(`No module named 'flash_attn_2_cuda'`) and plain `No module named 'flash_attn'` without it. Fix 2 (a
flash-attn wheel built for that torch and CUDA) needs a GPU and GitHub's release wheels: skipped. Fix 3:
started with `--cpu` alone the same import goes through, logs nothing of the kind, and the attention
ComfyUI picks by default matches an fp32 reference. On the CPU that default is its sub-quadratic attention
(attention_sub_quad); PyTorch's SDPA (attention_pytorch) is the default only on NVIDIA GPUs with torch 2
(model_management.py at a125cd84, read, not run), which the record's fix now says."""

import logging
import os

from verification.cases import _builds as b
from verification.cases import _comfyui, _venv
from verification.cases import _tiny_llama as llama

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1500
COMFY = "a125cd84"

ROOT_TAP = r'''
import logging
class _ErrkbTap(logging.Handler):
    def emit(self, record):
        print("ERRKB-LOG", record.levelname, record.name, repr(record.getMessage()), flush=True)
logging.getLogger().addHandler(_ErrkbTap())
'''

IMPORT = ROOT_TAP + r'''
import comfy.ldm.modules.attention as attention
print("ERRKB-ATTENTION", attention.optimized_attention.__name__, flush=True)
'''

FIX_3 = IMPORT + r'''
import torch
torch.manual_seed(0)
q, k, v = (torch.randn(2, 16, 4 * 32) for _ in range(3))   # ComfyUI's (batch, tokens, heads * dim)
out = attention.optimized_attention(q, k, v, heads=4)
split = lambda t: t.reshape(2, 16, 4, 32).transpose(1, 2)
ref = torch.softmax(split(q) @ split(k).transpose(-1, -2) / 32 ** 0.5, -1) @ split(v)
print("ERRKB-MAXERR", (out - ref.transpose(1, 2).reshape(2, 16, 128)).abs().max().item(), flush=True)
'''

CHECK = "import flash_attn, torch; print(flash_attn.__version__, torch.__version__, torch.version.cuda)"


def _broken_flash_attn(ctx) -> str:
    env = _comfyui.env(ctx)
    folder = _venv._tmp_root() / "target-flash-attn-2.8.3-no-cuda"
    if not (folder / ".errkb-done").exists():
        wheel = b.flash_attn_python_wheel(ctx, "2.8.3", env=b.with_cpu_torch(ctx))
        res = env.pip("install", "--no-deps", "--target", folder, wheel, timeout=300)
        if res.returncode != 0:
            ctx.skip(f"could not install {wheel}: {res.tail(300)}")
        (folder / ".errkb-done").write_text("ok")
    ctx.note("flash-attn 2.8.3 built with FLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE (no flash_attn_2_cuda) on the path")
    return str(folder)


def reproduce(ctx):
    broken = _comfyui.run(ctx, IMPORT, COMFY, ["--cpu", "--use-flash-attention"], path=[_broken_flash_attn(ctx)])
    said = [text for text in llama.logged(broken.output) if "must be installed first" in text]
    ctx.note(f"with the broken flash-attn: exit {broken.returncode}, " + ("the same message" if said else "no such message"))
    res = _comfyui.run(ctx, IMPORT, COMFY, ["--cpu", "--use-flash-attention"])

    def log_again():
        llama.relog(res.output)
        if res.returncode != 255:
            raise AssertionError(f"ComfyUI did not exit with 255 (exit(-1)): exit {res.returncode}")
    ctx.expect_logged("root", log_again, level=logging.ERROR)


def fix_1(ctx):
    env = _comfyui.env(ctx)
    broken = env.python_run(CHECK, PYTHONPATH=_broken_flash_attn(ctx))
    absent = env.python_run(CHECK)

    def shows_cause():
        for what, run, cause in (("broken", broken, "No module named 'flash_attn_2_cuda'"),
                                 ("absent", absent, "No module named 'flash_attn'")):
            last = _venv.last_exception(run.output, 200)
            if cause not in last:
                raise AssertionError(f"the check with flash-attn {what} ended on {last}")
            ctx.note(f"flash-attn {what}: the check ends on {last}")
    ctx.call(shows_cause)


def fix_2(ctx):
    ctx.skip("installs a flash-attn wheel built for ComfyUI's torch and CUDA (GitHub or community builds, not "
             "reachable here) and needs an Ampere or newer GPU to use it")


def fix_3(ctx):
    res = _comfyui.run(ctx, FIX_3, COMFY, ["--cpu"])
    ctx.not_logged("root", llama.relog, res.output)

    def started():
        name = _venv.printed(res, "ERRKB-ATTENTION").split()[1]
        ctx.note(f"optimized_attention is {name}")
        if name not in ("attention_sub_quad", "attention_pytorch"):
            raise AssertionError(f"ComfyUI picked {name}, not one of its built-in PyTorch attentions")
        return float(_venv.printed(res, "ERRKB-MAXERR").split()[1])
    err = ctx.call(started)
    ctx.close([err], [0.0], atol=1e-5, what="ComfyUI's default attention against an fp32 reference")
