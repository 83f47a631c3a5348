"""With flashinfer-python installed but no flashinfer-cubin and no nvcc or ninja for its JIT, vLLM warns and treats FlashInfer as unavailable."""

import importlib.util
import os
import shutil
import tempfile

from errkb.verify.case import Refuted
from verification.cases.vllm._vllm import FI_UTILS, flashinfer_utils

BACKEND = "vllm"
REQUIRES = {"packages": ["vllm.platforms.interface", "requests", "zmq"]}
NO_CUBIN = {"VLLM_HAS_FLASHINFER_CUBIN": "0", "CUDA_PATH": ""}


def _has_flashinfer(ctx, env):
    if importlib.util.find_spec("flashinfer") is None:
        ctx.skip("flashinfer-python is not importable here: has_flashinfer() returns before the check")
    if importlib.util.find_spec("flashinfer_cubin") is not None:
        ctx.skip("flashinfer-cubin is installed here: the JIT tools are not looked for")

    def run():
        with flashinfer_utils(env={**NO_CUBIN, **env}) as fi:
            return fi.has_flashinfer()
    return run


def reproduce(ctx):
    # CUDA_HOME naming a directory without bin/nvcc, and a PATH without ninja.
    with tempfile.TemporaryDirectory() as empty:
        _, ok = ctx.expect_logged(FI_UTILS, _has_flashinfer(ctx, {"CUDA_HOME": empty, "PATH": empty}))
    if ok:
        raise Refuted("has_flashinfer() still returned True")


def fix_2(ctx):
    # CUDA_HOME pointing at this machine's CUDA toolkit and ninja on PATH.
    nvcc, ninja = shutil.which("nvcc"), shutil.which("ninja")
    if not (nvcc and ninja):
        ctx.skip(f"this machine lacks the JIT tools the fix installs (nvcc={nvcc}, ninja={ninja})")
    cuda_home = os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))
    env = {"CUDA_HOME": cuda_home, "PATH": os.path.dirname(ninja)}
    if not ctx.not_logged(FI_UTILS, _has_flashinfer(ctx, env)):
        raise Refuted("has_flashinfer() returned False with nvcc and ninja present")
    ctx.note(f"CUDA_HOME={cuda_home}, ninja from {os.path.dirname(ninja)}")
