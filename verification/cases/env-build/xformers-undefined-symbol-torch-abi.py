"""xFormers' compiled modules built for one torch, loaded under another: the loader reports an
undefined torch (c10) symbol. xformers 0.0.32.post2 (built for torch 2.8.0 and CUDA 12.8; PyPI wheel,
pip --target --no-deps) under with_torch()'s torch 2.14.1 (PyPI's CUDA build; it imports on this
GPU-less machine), with CUDA 12's runtime library (nvidia-cuda-runtime-cu12 12.8.90) on
LD_LIBRARY_PATH so that only the torch mismatch is left.

Reproduce: importing xformers' FlashAttention 3 extension (xformers.flash_attn_3._C, one of the two
modules the record names) raises the record's message, naming a c10 symbol. The fixes (the xformers
build for this torch, or the torch this xformers was built for) need a second multi-GB torch and are
not run here."""

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
XFORMERS = "xformers==0.0.32.post2"
CUDART = "nvidia-cuda-runtime-cu12==12.8.90"


def reproduce(ctx):
    env = b.with_torch(ctx)
    site = b.target_dir(ctx, XFORMERS, no_deps=True, env=env)
    cudart = b.target_dir(ctx, CUDART, no_deps=True, env=env)
    res = b.run_with_torch(ctx, "import torch, xformers.flash_attn_3._C", path=[site], env=env,
                           extra_env={"LD_LIBRARY_PATH": f"{cudart}/nvidia/cuda_runtime/lib"})
    ctx.note("`import xformers.flash_attn_3._C` under torch 2.14.1: " + _venv.last_exception(res.output, 240))
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])
