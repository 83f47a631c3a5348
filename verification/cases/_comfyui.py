"""ComfyUI's own Python package (`comfy`, from Comfy-Org/ComfyUI at a pinned commit, exported from a
local clone by _downstream) in a CPU environment, for the records whose message ComfyUI or one of its
custom nodes prints.

The environment: a CPU-only torch (torch 2.13.0+cpu, _builds.cpu_torch_requirement) with the part of
ComfyUI's requirements.txt that `comfy`'s attention, model-management and Flux modules import (DEPS,
as pip resolves them); no flash-attn, xformers or sageattention. A child runs the way main.py starts:
`comfy.options.enable_args_parsing()` with the command line in sys.argv, then the imports. Custom nodes
are loaded the way ComfyUI's nodes.py loads them: their __init__.py through
importlib.util.spec_from_file_location under the folder's name."""

from __future__ import annotations

import os

from verification.cases import _builds as b
from verification.cases import _downstream, _venv

REPO = "Comfy-Org/ComfyUI"
DEPS = ("numpy", "einops", "psutil", "Pillow", "safetensors", "tqdm", "scipy", "pyyaml", "torchsde",
        "matplotlib")  # the last for custom nodes that import it (ComfyUI-FluxRegionAttention)

START = r'''
import sys
import comfy.options
comfy.options.enable_args_parsing()
sys.argv = ["main.py", *ARGV]
'''

LOAD_NODE = r'''
import importlib.util, os
def load_node(folder):
    name = os.path.basename(folder)
    spec = importlib.util.spec_from_file_location(name, os.path.join(folder, "__init__.py"),
                                                  submodule_search_locations=[folder])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
'''


def env(ctx, extra=()) -> _venv.Venv:
    return _venv.venv(ctx, "comfyui-cpu-torch" + ("-" + "-".join(extra) if extra else ""), pip=b.PIP,
                      install=[*b.cpu_torch_requirement(), *DEPS, *extra])


def comfy_tree(ctx, commit: str):
    return _downstream.tree(ctx, REPO, commit, ("comfy", "comfy_api", "folder_paths.py", "node_helpers.py", "utils"))


def run(ctx, code: str, commit: str, argv=(), *, path=(), extra=(), extra_env: dict | None = None) -> _venv.Run:
    """`code` after ComfyUI's start-up prologue (argv as the command line), in env(ctx, extra)'s Python,
    with ComfyUI at `commit` and then `path` on PYTHONPATH; the child's cwd is ComfyUI's root."""
    environment = env(ctx, extra)
    root = comfy_tree(ctx, commit)
    prologue = START.replace("*ARGV", ", ".join(repr(a) for a in argv) + ("," if argv else ""))
    res = _venv.run([environment.python, "-c", prologue + LOAD_NODE + code], cwd=root, timeout=600,
                    env=_venv.tool_env(VIRTUAL_ENV=str(environment.path),
                                       PYTHONPATH=os.pathsep.join([str(root), *map(str, path)]), **(extra_env or {})))
    for note in environment.notes:
        ctx.note(note)
    ctx.note(f"ComfyUI {commit[:10]} started as `main.py {' '.join(argv)}`: exit {res.returncode}; "
             + _venv.last_exception(res.output, 200))
    return res
