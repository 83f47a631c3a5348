"""ComfyUI-FluxRegionAttention before commit 0ab8a22 imports xformers on node.py's second line, so
ComfyUI cannot load the node pack where xformers is not installed: "No module named 'xformers'".

Environment: verification/cases/_comfyui.py (torch 2.13.0+cpu and the ComfyUI requirements `comfy`
imports, with matplotlib, which node.py imports; no xformers), ComfyUI's `comfy` package at commit
6752a826 (2025-03-02, the day of the node's fix), the node pack from attashe/ComfyUI-FluxRegionAttention
at be7b147 (the last commit before the fix) and 0ab8a22 (the fix), both exported from local clones by
_downstream; nothing of either repository is committed here. ComfyUI's start-up is as main.py runs it
with `--cpu`; the node pack is loaded as nodes.py loads a custom node (its __init__.py through
importlib, under the folder's name).

Reproduce: loading the pack at be7b147 raises the record's ModuleNotFoundError from node.py's
`from xformers.ops import ...`. Fix 1: at 0ab8a22 the same load gets past it and registers the pack's
nodes (NODE_CLASS_MAPPINGS printed). Fix 2 (an xformers built for ComfyUI's torch) needs a CUDA torch:
xformers' extensions link torch's CUDA libraries, which this CPU-only torch does not have: skipped."""

from verification.cases import _comfyui, _downstream, _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1500
NODE = "attashe/ComfyUI-FluxRegionAttention"
BEFORE_FIX = "be7b147"
FIXED = "0ab8a22"
COMFY = "6752a826"

LOAD = r'''
import os
pack = load_node(os.environ["ERRKB_NODE"])
print("ERRKB-NODES", sorted(pack.NODE_CLASS_MAPPINGS), flush=True)
'''


def _load(ctx, commit: str) -> _venv.Run:
    tree = _downstream.tree(ctx, NODE, commit)
    folder = tree.parent / f"ComfyUI-FluxRegionAttention-{commit}"
    if not folder.exists():
        folder.symlink_to(tree, target_is_directory=True)
    res = _comfyui.run(ctx, LOAD, COMFY, ["--cpu"], extra_env={"ERRKB_NODE": str(folder)})
    ctx.note(f"node pack at {commit}: {_venv.last_exception(res.output, 200)}")
    return res


def reproduce(ctx):
    res = _load(ctx, BEFORE_FIX)
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    res = _load(ctx, FIXED)

    def loaded():
        line = _venv.printed(res, "ERRKB-NODES")
        ctx.note(line.replace("ERRKB-NODES", "registered:"))
    ctx.call(loaded)


def fix_2(ctx):
    ctx.skip("an xformers release built for ComfyUI's torch needs a CUDA build of torch (its extensions link "
             "torch's CUDA libraries); this environment's torch is CPU-only")
