"""flash-attn's metadata step with torch 2.1 and setuptools 82: "No module named 'pkg_resources'".

Environments made by uv 0.9.0 on Python 3.11 with PyPI's torch 2.1.2 (CUDA 12.1, with its nvidia-* wheels;
numpy<2, as torch 2.1 was built against numpy 1.x), pip 26.3, wheel, packaging, ninja and psutil, and
setuptools at the step's version; this machine's nvcc 13.0 is at /usr/local/cuda. The install is the
README's `pip install flash-attn --no-build-isolation` (2.8.3, the PyPI sdist), stopped once pip is past
the metadata step (the compile takes hours here).

Reproduce: setuptools 82.0.0 (no pkg_resources any more): setup.py imports torch.utils.cpp_extension,
whose `from pkg_resources import packaging` raises the record's ModuleNotFoundError inside pip's box; the
notes name the file the traceback ends in. Fix 1: the fix's `pip install "setuptools<82"` first (81.0.0),
then the same install gets past the metadata step. Fix 2: torch 2.14.1 (PyPI, CUDA 13.0) with the same
setuptools 82.0.0: the same install gets past the metadata step. Fix 3 needs flash-attn's GitHub
release wheels."""

import re

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 2400
OLD_TORCH = ("torch==2.1.2", "numpy<2")
SETUPTOOLS_WITHOUT = "setuptools==82.0.0"
TOOLS = (f"pip=={b.PIP}", f"wheel=={b.WHEEL}", "packaging", "ninja", "psutil")


def install(ctx, key: str, *requirements: str, setuptools: str) -> _venv.Run:
    _, env = b.uv_env(ctx, key, *requirements, *TOOLS, setuptools)
    ctx.note(f"setuptools {env.version('setuptools')}, torch {env.version('torch')} in the environment")
    res = _venv.run([env.python, "-m", "pip", "install", "--no-build-isolation", b.FLASH_ATTN],
                    env=_venv.tool_env(VIRTUAL_ENV=str(env.path)), timeout=900, stop_at=b.build_started("flash-attn"))
    ctx.note(res.summary())
    return res


def reproduce(ctx):
    res = install(ctx, "torch-2.1.2-setuptools-82", *OLD_TORCH, setuptools=SETUPTOOLS_WITHOUT)
    files = re.findall(r'File "[^"]*/(torch/[^"]+|setup\.py)", line (\d+)', res.output)
    if files:
        ctx.note("the traceback's last frames: " + ", ".join(f"{f}:{n}" for f, n in files[-2:]))
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    res = install(ctx, "torch-2.1.2-setuptools-below-82", *OLD_TORCH, setuptools="setuptools<82")
    ctx.call(b.past_metadata, ctx, res, ctx.record["template"])


def fix_2(ctx):
    res = install(ctx, "torch-2.14.1-setuptools-82", b.TORCH_CU130, setuptools=SETUPTOOLS_WITHOUT)
    ctx.call(b.past_metadata, ctx, res, ctx.record["template"])


fix_3 = b.release_wheel_fix
