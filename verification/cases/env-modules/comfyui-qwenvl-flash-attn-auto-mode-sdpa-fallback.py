"""ComfyUI-QwenVL (1.1.0 to 2.0.0) in attention_mode 'auto' prints '[QwenVL] Flash-Attn auto mode:
dependency not ready, using SDPA' when its flash_attn_available() check says no, and loads with SDPA.

Environment: verification/cases/_comfyui.py's (torch 2.13.0+cpu and the ComfyUI requirements `comfy`
imports) with transformers 4.57.3 (and what pip resolves for it) added for the node; ComfyUI at
a125cd84 for folder_paths; 1038lab/ComfyUI-QwenVL at dcdf623 (2.0.0), 0d64a93 (1.1.0) and b74edf8 (2.1.0),
exported from local clones by _downstream (nothing of them is committed here). The node pack is loaded
as ComfyUI's nodes.py loads a custom node; its __init__ loads AILab_QwenVL.py under that name, and the
child calls the module's resolve_attention_mode(), the function the node's model loader asks for the
attn_implementation (no model is loaded: its weights come from the Hugging Face Hub, out of reach here).

Reproduce: on this GPU-less machine (torch.cuda.is_available() is False, flash-attn not installed),
resolve_attention_mode('auto') at dcdf623 prints the record's line and returns 'sdpa'; 0d64a93 prints the
same (noted), and b74edf8 (2.1.0) does not print it (noted: what it prints instead), the record's
boundary. Fix 1: the fix's check prints `None False` for torch's CUDA build and availability, then
get_device_capability() raises, which the fix's caveat names as the answer. Fix 2, its 'keep SDPA'
half: attention_mode 'sdpa' returns 'sdpa' and prints nothing of the kind. Installing a flash-attn
for an Ampere GPU (its other half) needs a GPU and is not run."""

from verification.cases import _comfyui, _downstream, _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1500
NODE = "1038lab/ComfyUI-QwenVL"
COMFY = "a125cd84"
RELEASES = {"2.0.0": "dcdf623", "1.1.0": "0d64a93", "2.1.0": "b74edf8"}
TRANSFORMERS = ("transformers==4.57.3",)
CHECK = ("import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available()); "
         "print(torch.cuda.get_device_capability()); import flash_attn; print(flash_attn.__version__)")

RESOLVE = r'''
import os
pack = load_node(os.environ["ERRKB_NODE"])
qwen = sys.modules["AILab_QwenVL"]
print("ERRKB-MODE-BEGIN", flush=True)
print("ERRKB-RESOLVED", qwen.resolve_attention_mode(os.environ["ERRKB_MODE"]), flush=True)
'''


def _resolve(ctx, release: str, mode: str) -> _venv.Run:
    tree = _downstream.tree(ctx, NODE, RELEASES[release])
    folder = tree.parent / f"ComfyUI-QwenVL-{RELEASES[release]}"
    if not folder.exists():
        folder.symlink_to(tree, target_is_directory=True)
    res = _comfyui.run(ctx, RESOLVE, COMFY, ["--cpu"], extra=TRANSFORMERS,
                       extra_env={"ERRKB_NODE": str(folder), "ERRKB_MODE": mode, "HF_HUB_OFFLINE": "1"})
    if "ERRKB-MODE-BEGIN" not in res.output:
        raise RuntimeError(f"the node pack did not load AILab_QwenVL: {res.tail(500)}")
    return res


def _printed(res: _venv.Run) -> str:
    after = res.output.split("ERRKB-MODE-BEGIN", 1)[1]
    return " | ".join(line.strip() for line in after.splitlines() if line.strip())


def reproduce(ctx):
    for release in ("1.1.0", "2.1.0"):
        other = _resolve(ctx, release, "auto")
        ctx.note(f"{release} ({RELEASES[release]}), attention_mode 'auto': {_printed(other)[:300]}")
    res = _resolve(ctx, "2.0.0", "auto")
    ctx.note(f"2.0.0 ({RELEASES['2.0.0']}), attention_mode 'auto': {_printed(res)[:300]}")

    def printed():
        if "ERRKB-RESOLVED sdpa" not in res.output:
            raise AssertionError(f"auto mode did not resolve to sdpa: {_printed(res)}")
        _venv.raise_tool_message("printed", res.output, ctx.record["template"])
    ctx.expect_error(printed)


def fix_1(ctx):
    res = _comfyui.env(ctx, TRANSFORMERS).python_run(CHECK)
    ctx.note("`python -c <the fix's check>`: " + " | ".join(res.output.strip().splitlines()[:1]
                                                          + [_venv.last_exception(res.output, 200)]))

    def answers():
        first = res.output.strip().splitlines()[0] if res.output.strip() else ""
        if not first.endswith("None False"):
            raise AssertionError(f"the check did not print a torch without CUDA: {res.tail(300)}")
        if "get_device_capability" not in res.output:
            raise AssertionError(f"get_device_capability() did not raise on the missing CUDA device: {res.tail(300)}")
    ctx.call(answers)


def fix_2(ctx):
    res = _resolve(ctx, "2.0.0", "sdpa")
    ctx.note(f"2.0.0, attention_mode 'sdpa': {_printed(res)[:300]}")

    def quiet():
        _venv.raise_tool_message("printed", res.output, ctx.record["template"])
        if "ERRKB-RESOLVED sdpa" not in res.output:
            raise AssertionError(f"attention_mode 'sdpa' did not resolve to sdpa: {_printed(res)}")
    ctx.call(quiet)
    ctx.note("installing a flash-attn built for ComfyUI's torch (the fix's other half) needs an Ampere GPU: not run")
