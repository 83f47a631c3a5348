"""vLLM's compiled ops next to a torch other than the one the wheel pins: `undefined symbol: _Z...` at import.

Real PyPI wheels on the CPU (verification/cases/_abi_wheels.py): vLLM 0.9.2, whose METADATA pins
torch==2.7.0, imported next to PyPI's torch 2.5.1 (CUDA 12.4). `vllm/_moe_C.abi3.so` and
`vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so` need only torch's libraries and libcudart.so.12 (torch
2.5.1's nvidia-cuda-runtime-cu12 wheel, loaded by `import torch`), so the loader gets as far as
binding symbols, exactly as on a GPU machine. `vllm/_C.abi3.so` also needs libcuda.so.1, the driver's
library, which this machine does not have: the loader would stop on that first, so no step loads it.

Fix 1 (put back the torch the release pins) is shown with the pair vLLM 0.6.6.post1 / torch 2.5.1
(its METADATA pins torch==2.5.1, which uv's cache holds): the same two kinds of extension load. The
record's command names vLLM 0.9.2's pins (torch 2.7.0: about 3 GB of CUDA wheels, not installed
here). vLLM 0.6.6.post1's `vllm/__init__.py` imports the engine and all of vLLM's dependencies, so
the fix loads the extension files with Python's own extension loader under their module names,
which is what `import vllm._moe_C` does once the package is imported.
"""

from verification.cases import _abi_wheels as abi

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
OLD = ("vllm", "0.9.2")
PAIR = ("vllm", "0.6.6.post1")

LOAD_FILE = """
    import importlib.machinery, importlib.util, torch
    for name, rel in {files!r}:
        loader = importlib.machinery.ExtensionFileLoader(name, {root!r} + "/" + rel)
        module = importlib.util.module_from_spec(importlib.util.spec_from_loader(name, loader))
        loader.exec_module(module)
        print("loaded", name, "next to torch", torch.__version__)
"""


def _pins(ctx, which):
    pins = abi.requires(ctx, *which)
    ctx.note(f"{which[0]} {which[1]} METADATA: Requires-Dist {', '.join(pins) or 'no torch'}")
    return pins


def reproduce(ctx):
    pins = _pins(ctx, OLD)
    if "torch==2.5.1" in pins:
        raise RuntimeError("vLLM 0.9.2 pins torch 2.5.1: not a mismatch")
    env = abi.torch_env(ctx, "torch==2.5.1")
    abi.torch_line(ctx, env)
    root = abi.unpacked(ctx, *OLD)
    ctx.note("NEEDED of vllm/_moe_C.abi3.so: " + ", ".join(abi.needed(root / "vllm" / "_moe_C.abi3.so")))
    fa2 = abi.run_import(ctx, env, "    import torch\n    import vllm.vllm_flash_attn._vllm_fa2_C", root)
    ctx.note(f"`import vllm.vllm_flash_attn._vllm_fa2_C`: {fa2[0] + ': ' + fa2[1] if fa2 else 'imported'}")
    got = abi.run_import(ctx, env, "    import torch\n    import vllm._moe_C", root)
    ctx.note("`import torch; import vllm._moe_C` (vLLM 0.9.2's own vllm/__init__.py runs first)")
    ctx.expect_error(abi.raise_again, got)


def fix_1(ctx):
    pins = _pins(ctx, PAIR)
    if pins != ["torch==2.5.1"]:
        raise RuntimeError(f"vLLM 0.6.6.post1 does not pin torch 2.5.1 alone: {pins}")
    env = abi.torch_env(ctx, "torch==2.5.1")
    abi.torch_line(ctx, env)
    root = abi.unpacked(ctx, *PAIR)
    files = [("vllm._moe_C", "vllm/_moe_C.abi3.so"),
             ("vllm.vllm_flash_attn.vllm_flash_attn_c", "vllm/vllm_flash_attn/vllm_flash_attn_c.abi3.so")]
    got = abi.run_import(ctx, env, LOAD_FILE.format(files=files, root=str(root)))
    ctx.call(abi.raise_again, got)
    ctx.note("vLLM 0.6.6.post1's _moe_C and vllm_flash_attn_c load next to the torch it pins (2.5.1); the record's "
             "command names 0.9.2's pins (torch 2.7.0), not installed here")


def fix_2(ctx):
    ctx.skip("`uv pip install vllm --torch-backend=auto` in a fresh environment resolves the newest vLLM with its CUDA "
             "torch (several GB); what it relies on, a vLLM next to the torch it pins, is fix 1's check")


def fix_3(ctx):
    ctx.skip("building vLLM from source against the installed torch is a CUDA compile of hours on this 2-core machine")
