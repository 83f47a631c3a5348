"""flash-attn's setup.py declares its CUDAExtension at import; torch raises 'CUDA_HOME environment
variable is not set' when it found no CUDA toolkit.

Reproduce: the README's command (`pip install flash-attn==2.8.3 --no-build-isolation`, pip 26.3,
torch 2.14.1 from PyPI with its CUDA 13.0 libraries, packaging/ninja/wheel present) run in a mount
namespace where no toolkit exists (/usr/local/cuda* and every nvcc on PATH hidden by overlay
whiteouts: a machine with torch from pip and no toolkit, the record's situation). Fix 1 as written:
the same command with CUDA_HOME=/usr/local/cuda and its bin/ on PATH, with the toolkit there (CUDA
13.0, the version torch was built with): pip gets past the metadata and stops there (the CUDA compile is not run). Fix 2 needs flash-attn's GitHub release wheels."""

import os

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200


def reproduce(ctx):
    res = b.no_isolation_install(ctx, b.FLASH_ATTN, "flash-attn", wrap=_venv.without_toolkit)
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    if not os.path.exists("/usr/local/cuda/bin/nvcc"):
        ctx.skip("needs a CUDA toolkit at /usr/local/cuda (the fix's path)")
    path = "/usr/local/cuda/bin" + os.pathsep + os.environ.get("PATH", "")
    res = b.no_isolation_install(ctx, b.FLASH_ATTN, "flash-attn", env_extra={"CUDA_HOME": "/usr/local/cuda", "PATH": path})
    nvcc = _venv.run(["/usr/local/cuda/bin/nvcc", "-V"], timeout=60)
    ctx.note("nvcc -V: " + " ".join(nvcc.output.split()[-8:]))
    ctx.call(b.past_metadata, ctx, res, ctx.record["template"])


def fix_2(ctx):
    ctx.skip("needs flash-attn's GitHub release wheels: only PyPI is reachable from this machine")
