"""Real xformers wheels on the GPU machine, each imported in a child process of its own.

xformers 0.0.28.post3 from PyPI, whose `_C.so` was built for torch 2.5.1 and CUDA 12.1 (see
docs/verification.md). The device has one torch (2.11), so the wheel stands for "an extension
built for another torch" exactly as users meet it. The old `_C.so` also needs CUDA 12's runtime library, which torch 2.11 (CUDA 13) does
not ship: nvidia-cuda-runtime-cu12 12.1.105 provides it, as it does in a pip environment that
kept the CUDA 12 runtime. Each import runs in a child process: a wheel, once imported, cannot
be unloaded, and the worker runs other cases after this one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

WHEELS = {
    "old": "xformers-0.0.28.post3-cp312-cp312-manylinux_2_28_x86_64.whl",
    "cudart12": "nvidia_cuda_runtime_cu12-12.1.105-py3-none-manylinux1_x86_64.whl",
}


def folder() -> Path:
    return Path(os.environ.get("ERRKB_XFORMERS_WHEELS", ".gpu/xf"))


def unpacked(ctx, which: str) -> Path:
    """The wheel unpacked into a folder of its own (once per process), or the site `make
    gpu-payload`'s xformers-abi payload unpacked both wheels into (ERRKB_XFORMERS_SITE, set by
    run.sh), which holds the same files side by side."""
    site = os.environ.get("ERRKB_XFORMERS_SITE")
    if site:
        marker = {"old": "xformers/__init__.py", "cudart12": "nvidia/cuda_runtime/lib"}[which]
        if not (Path(site) / marker).exists():
            ctx.skip(f"{Path(site) / marker} is not here (ERRKB_XFORMERS_SITE: the xformers-abi payload, call 3)")
        return Path(site)
    wheel = folder() / WHEELS[which]
    if not wheel.is_file():
        ctx.skip(f"{wheel} is not here (carry .gpu/xf: see docs/verification.md)")
    dest = Path(tempfile.gettempdir()) / f"errkb-xf-{which}"
    if not dest.is_dir():
        with zipfile.ZipFile(wheel) as z:
            z.extractall(dest)
    return dest


def run_child(ctx, which: str, code: str) -> subprocess.CompletedProcess:
    """`code` run by this interpreter with the wheel first on the path (and CUDA 12's runtime
    library findable, for the old wheel)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(unpacked(ctx, which)), os.environ.get("PYTHONPATH", "")]))
    if which == "old":
        lib = unpacked(ctx, "cudart12") / "nvidia" / "cuda_runtime" / "lib"
        env["LD_LIBRARY_PATH"] = os.pathsep.join([str(lib), os.environ.get("LD_LIBRARY_PATH", "")])
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)


def last_error_line(stderr: str, prefix: str) -> str | None:
    """The message of the last `prefix...` line of a child's traceback, as Python printed it."""
    lines = [line for line in stderr.splitlines() if line.startswith(prefix)]
    return lines[-1][len(prefix):] if lines else None


def describe(child: subprocess.CompletedProcess) -> str:
    return json.dumps({"rc": child.returncode, "stderr_tail": child.stderr[-1500:]})
