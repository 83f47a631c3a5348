"""The environment fingerprint recorded with every result.

`python -m errkb.verify.env` prints it as JSON; the runner runs that with the workers' Python,
so it describes where the cases actually ran. `env_id` hashes everything but the errkb commit
and the host name: identical machines share results, and resuming skips what is done there.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import platform
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

# Distributions whose versions matter to some case (absent ones are left out).
LIBRARIES = ["torch", "triton", "flash-attn-4", "flash-attn", "nvidia-cutlass-dsl", "quack-kernels",
             "apache-tvm-ffi", "flashinfer-python", "sglang", "sgl-kernel", "sglang-kernel", "vllm", "numpy"]


def _libraries() -> dict[str, str]:
    out = {}
    for name in LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    if "sglang" not in out:  # a carried source tree without distribution metadata
        try:
            from sglang.version import __version__ as sglang_version

            out["sglang"] = f"{sglang_version} (source files)"
        except Exception:  # noqa: BLE001 - absent or broken: just not listed
            pass
    extra = os.environ.get("ERRKB_VERIFY_LIBS", "")  # "name=version,..." for carried source trees
    for item in filter(None, extra.split(",")):
        name, _, version = item.partition("=")
        out[name.strip()] = version.strip()
    return dict(sorted(out.items()))


def _driver() -> str | None:
    exe = shutil.which("nvidia-smi")
    if not exe:
        return None
    try:
        out = subprocess.run([exe, "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20).stdout.strip().splitlines()
        return out[0].strip() if out else None
    except (OSError, subprocess.SubprocessError):
        return None


def probe() -> dict:
    env = {
        "python": platform.python_version(),
        "platform": f"{platform.system()}-{platform.machine()}",
        "gpu": None, "compute_capability": None, "arch": "cpu", "gpu_count": 0,
        "driver": _driver(), "cuda": None, "torch": None,
        "libraries": _libraries(),
    }
    if os.environ.get("ERRKB_PRETEND_CUDA"):
        # a rehearsal (errkb.verify.pretend): its own environment, never taken for a GPU's
        env["pretend_cuda"] = os.environ["ERRKB_PRETEND_CUDA"]
    try:
        import torch
    except Exception:  # noqa: BLE001 - no torch is a valid environment (everything GPU is skipped)
        return env
    env["torch"] = torch.__version__
    env["cuda"] = torch.version.cuda
    try:
        if torch.cuda.is_available():
            major, minor = torch.cuda.get_device_capability(0)
            env.update(gpu=torch.cuda.get_device_name(0), compute_capability=f"{major}.{minor}",
                       arch=f"sm{major}{minor}", gpu_count=torch.cuda.device_count())
    except Exception as exc:  # noqa: BLE001
        env["gpu_error"] = f"{type(exc).__name__}: {exc}"[:500]
    return env


def errkb_commit(repo: Path | None = None) -> str | None:
    """The errkb commit the cases ran from: ERRKB_COMMIT when given (a copied tree on a GPU box
    may carry a .git that cannot answer), else git's HEAD (plus -dirty), else None."""
    if os.environ.get("ERRKB_COMMIT"):
        return os.environ["ERRKB_COMMIT"]
    repo = repo or Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "-q", "HEAD"],
                              capture_output=True, text=True, timeout=10)
        sha = head.stdout.strip()
        if head.returncode != 0 or not re.fullmatch(r"[0-9a-f]{40}", sha):
            return None
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return sha + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return None


def env_id(env: dict) -> str:
    key = {k: v for k, v in env.items() if k not in {"errkb_commit", "host", "gpu_error"}}
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:12]


def describe(env: dict) -> str:
    gpu = f"{env['gpu']} ({env['arch']})" if env.get("gpu") else "no GPU"
    if env.get("pretend_cuda"):
        gpu += f" (pretend CUDA {env['pretend_cuda']}: a rehearsal)"
    libs = ", ".join(f"{k} {v}" for k, v in env.get("libraries", {}).items() if k != "torch")
    return f"{gpu}, torch {env.get('torch')}, CUDA {env.get('cuda')}" + (f", {libs}" if libs else "")


if __name__ == "__main__":
    json.dump(probe(), sys.stdout)
    sys.stdout.write("\n")
