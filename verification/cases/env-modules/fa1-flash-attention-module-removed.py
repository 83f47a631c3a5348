"""`from flash_attn.flash_attention import FlashAttention` (FlashAttention 1's module wrappers) with
flash-attn 2.x installed: "No module named 'flash_attn.flash_attention'".

flash-attn 2.x's __init__ imports its compiled flash_attn_2_cuda first, so without a CUDA build the
import stops on that module (noted by reproduce). flash-attn's own Triton backend
(FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE; in the tree at v2.7.4, not at v2.7.0.post2) imports without it, and is used here; Python's
search for the submodule does not depend on which kernels the package loaded.

Environment (uv 0.9.0, Python of the runner): torch 2.14.1 (PyPI), einops, and flash-attn 2.8.3 as a
wheel built from its PyPI sdist with FLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE (pip 26.3,
--no-build-isolation, in the with_torch environment).

Reproduce: the record's import raises its message; the step notes that the installed package has no
flash_attn/flash_attention.py. Fix 1: flash_attn_qkvpacked_func imports from flash_attn, the fix's
call binds to its signature, and flash_attn.modules.mha.MHA (the explanation's replacement for
FlashMHA) imports; running the kernel needs an sm80+ GPU (not run). Fix 2 (a source build of 1.0.9,
a CUDA compile) is skipped."""

import re

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
VERSION = "2.8.3"
AMD = {"FLASH_ATTENTION_TRITON_AMD_ENABLE": "TRUE"}
REPRODUCE = ("import os, flash_attn; print('flash_attn', flash_attn.__version__)\n"
             "print('has-file', os.path.exists(os.path.join(os.path.dirname(flash_attn.__file__), 'flash_attention.py')))\n"
             "from flash_attn.flash_attention import FlashAttention")
FIX_1 = ("import inspect\nfrom flash_attn import flash_attn_qkvpacked_func\nfrom flash_attn.modules.mha import MHA\n"
         "inspect.signature(flash_attn_qkvpacked_func).bind('qkv', dropout_p=0.0, causal=True)\n"
         "print('binds', flash_attn_qkvpacked_func.__module__, MHA.__module__)")



def _env(ctx):
    tool, env = b.uv_env(ctx, f"fa2-{VERSION}", "torch==2.14.1", "einops", b.flash_attn_python_wheel(ctx, VERSION))
    return env


def _py(env, code, **extra):
    return _venv.run([env.python, "-c", code], env=_venv.tool_env(VIRTUAL_ENV=str(env.path), **extra),
                     cwd=_venv._tmp_root(), timeout=600)


def reproduce(ctx):
    env = _env(ctx)
    plain = _py(env, REPRODUCE)
    causes = _venv.exception_lines(plain.output)
    ctx.note(f"without FLASH_ATTENTION_TRITON_AMD_ENABLE: {causes[-1] if causes else plain.tail(200)}")
    res = _py(env, REPRODUCE, **AMD)
    ctx.note("with FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE: "
             + "; ".join(l for l in res.output.splitlines() if l.startswith(("flash_attn ", "has-file"))))
    if not re.search(rf"^flash_attn {re.escape(VERSION)}$", res.output, re.M):
        ctx.skip(f"flash_attn {VERSION} did not import with its Triton backend: {res.tail(400)}")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    res = _py(_env(ctx), FIX_1, **AMD)

    line = ctx.call(_venv.printed, res, "binds ")
    ctx.note(line + " (the kernel itself needs an sm80+ GPU: not run)")


def fix_2(ctx):
    ctx.skip("installing flash-attn 1.0.9 is a CUDA source build (no wheels): hours on this machine, and the "
             "record's caveat (a modern torch may not build it) needs that compile")
