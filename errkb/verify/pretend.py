"""Pretend CUDA: make a machine without a GPU look like one to the code under test, for rehearsals.

GPU time is scarce, and a launch path that goes one way on a CPU machine and another on a GPU
machine (vLLM picks its CUDA platform only where it finds a GPU, and that imports compiled modules
the CPU path never touches) fails there first. `ERRKB_PRETEND_CUDA=9.0` makes each worker process
answer torch's device queries as one CUDA device of that compute capability would, and makes the
projects that look for a GPU without asking torch (vLLM asks NVML) find one too, so the GPU path's
imports and decisions run on the CPU. Nothing computes on the pretend device: a step that allocates
on it fails (an error, never a verdict).

Such results are rehearsals, never GPU results: the environment records `pretend_cuda`, every step
says so in its notes, and `errkb verify merge` refuses them (errkb.verify.results).
"""

from __future__ import annotations

import importlib.abc
import os
import re
import sys
from types import SimpleNamespace

ENV = "ERRKB_PRETEND_CUDA"
_applied: list[str] = []


def capability() -> tuple[int, int] | None:
    """The pretend compute capability ERRKB_PRETEND_CUDA names ("9.0" -> (9, 0)), or None."""
    text = os.environ.get(ENV, "").strip()
    if not text:
        return None
    m = re.fullmatch(r"(\d+)\.(\d+)", text)
    if not m:
        raise ValueError(f"{ENV}={text!r}: want MAJOR.MINOR, e.g. 9.0")
    return int(m.group(1)), int(m.group(2))


def note() -> str:
    major, minor = capability()
    return (f"{ENV}={major}.{minor}: torch was made to report a CUDA device of capability {major}.{minor} "
            "on a machine without one; a CPU rehearsal of the GPU path, not a GPU result")


def device_name(cap: tuple[int, int]) -> str:
    return f"errkb pretend CUDA {cap[0]}.{cap[1]} (no GPU)"


def _patch_torch(cap: tuple[int, int]) -> None:
    try:
        import torch
    except ImportError as exc:
        raise RuntimeError(f"{ENV} is set, but torch does not import here ({exc}): nothing to pretend with") from exc

    name = device_name(cap)
    props = SimpleNamespace(name=name, major=cap[0], minor=cap[1], total_memory=141 * 2**30,
                            multi_processor_count=132, is_integrated=False, L2_cache_size=50 * 2**20,
                            warp_size=32, uuid="errkb-pretend", gcnArchName="")
    answers = {
        "is_available": lambda: True,
        "device_count": lambda: 1,
        "_device_count_nvml": lambda: 1,
        "current_device": lambda: 0,
        "set_device": lambda device: None,
        "synchronize": lambda device=None: None,
        "get_device_capability": lambda device=None: cap,
        "get_device_name": lambda device=None: name,
        "get_device_properties": lambda device=None: props,
        "mem_get_info": lambda device=None: (props.total_memory, props.total_memory),
        "get_arch_list": lambda: [f"sm_{cap[0]}{cap[1]}"],
    }
    for attr, fn in answers.items():
        setattr(torch.cuda, attr, fn)
    if not torch.version.cuda:
        torch.version.cuda = "13.0"  # a CPU-only torch: the CUDA torch's own answer


# Projects that decide "is there a GPU" without asking torch, and how each is told yes. vLLM's
# CUDA platform plugin asks NVML (vllm/platforms/__init__.py, cuda_platform_plugin), which has no
# library here: its plugin is replaced by one answering as NVML does on a GPU machine.
def _vllm_platforms(module) -> None:
    plugins = getattr(module, "builtin_platform_plugins", None)
    if isinstance(plugins, dict) and "cuda" in plugins:
        plugins["cuda"] = lambda: "vllm.platforms.cuda.CudaPlatform"


AFTER_IMPORT = {"vllm.platforms": _vllm_platforms}


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs AFTER_IMPORT[name](module) right after module `name` first executes."""

    def find_spec(self, fullname, path, target=None):
        hook = AFTER_IMPORT.get(fullname)
        if hook is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        original = loader.exec_module

        def exec_module(module):
            original(module)
            hook(module)

        loader.exec_module = exec_module
        return spec


def apply() -> str | None:
    """Apply ERRKB_PRETEND_CUDA to this process (once); returns the note, or None when unset."""
    cap = capability()
    if cap is None:
        return None
    if not _applied:
        _patch_torch(cap)
        for name, hook in AFTER_IMPORT.items():
            if name in sys.modules:
                hook(sys.modules[name])
        sys.meta_path.insert(0, _AfterImport())
        _applied.append(f"{cap[0]}.{cap[1]}")
    return note()
