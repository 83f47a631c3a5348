"""`undefined symbol: c10::...`: the loader's `_ZN3c10...` failure, read as C++ (c++filt).

The loader prints mangled names; this record is the readable spelling people and tools quote. So the
reproduce step takes a real loader failure and demangles its symbol with c++filt (GNU binutils), as
the record says, and the readable line must be an instance of the record's template. The failure:
vLLM 0.9.2's `vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so` (METADATA: torch==2.7.0, a C++11-ABI torch)
imported next to PyPI's torch 2.5.1 (CUDA 12.4, built with the old ABI), on the CPU; that file needs
only torch's libraries and libcudart.so.12 (verification/cases/_abi_wheels.py). Fix 1 runs the
record's diagnostics as written (torch's version line, nm -DC on the extension and on every library in torch/lib);
fix 2 installs an extension built for the torch present: vLLM 0.6.6.post1, which pins torch 2.5.1.
"""

import os

from verification.cases import _abi_wheels as abi
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
OLD = ("vllm", "0.9.2")
PAIR = ("vllm", "0.6.6.post1")
EXT = "vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so"


def _failure(ctx):
    env = abi.torch_env(ctx, "torch==2.5.1")
    root = abi.unpacked(ctx, *OLD)
    got = abi.run_import(ctx, env, "    import torch\n    import vllm.vllm_flash_attn._vllm_fa2_C", root)
    if got is None or abi.symbol(got[1]) is None:
        raise RuntimeError(f"the import gave no undefined symbol: {got}")
    return env, root, got


def reproduce(ctx):
    env, root, (cls, message) = _failure(ctx)
    mangled = abi.symbol(message)
    readable = abi.demangle(mangled)
    ctx.note(f"the loader printed: {cls}: {message}")
    ctx.note(f"c++filt {mangled} -> {readable}")
    line = message.replace(mangled, readable)
    ctx.expect_error(abi.raise_again, (cls, line))


def fix_1(ctx):
    """The record's commands as written (bash, this environment's python first on PATH), the placeholder path
    replaced by the failing file and the example name by the one the loader printed."""
    env, root, (_, message) = _failure(ctx)
    readable = abi.demangle(abi.symbol(message))
    name = readable.split("(", 1)[0]
    script = abi.record_fix("env-build", "torch-extension-undefined-symbol-demangled", 1)["after"].replace("/path/to/failing_extension.so", str(root / EXT))
    script = script.replace("c10::ListType::get", name)
    res = _venv.run(["bash", "-c", script], env=_venv.tool_env(PATH=f"{env.path / 'bin'}:{os.environ['PATH']}"),
                    cwd=_venv._tmp_root(), timeout=600)
    lines = res.output.splitlines()
    ctx.note(f"the fix's commands printed: {' | '.join(lines)[:1500]}")

    def tells_the_mismatch():
        if not lines or not lines[0].endswith(("True", "False")):
            raise AssertionError(f"no torch version line: {res.tail(400)}")
        undefined = [l.split(None, 1)[1] for l in lines if l.split()[:1] == ["U"]]
        exported = [l.split(None, 2)[2] for l in lines if len(l.split()) > 2 and l.split()[1] == "T"]
        libs = [l.rsplit("/", 1)[1] for l in lines if l.endswith(".so")]
        if readable not in undefined:
            raise AssertionError(f"the extension's undefined list lacks {readable}")
        if readable in exported:
            raise AssertionError("torch exports the very symbol: no mismatch to find")
        if not exported:
            raise AssertionError(f"no torch library defines any {name}: nothing to compare with")
        if "__cxx11" in readable and not lines[0].endswith("False"):
            raise AssertionError(f"the extension wants the C++11 ABI but torch reports {lines[0]}")
        ctx.note(f"torch {lines[0]}: the extension asks for the std::__cxx11 string form; torch exports only "
                 f"{exported[0]}, in {', '.join(libs)} (libc10.so has no {name})")

    ctx.call(tells_the_mismatch)


def fix_2(ctx):
    pins = abi.requires(ctx, *PAIR)
    ctx.note(f"vllm 0.6.6.post1 METADATA: Requires-Dist {', '.join(pins)}")
    if pins != ["torch==2.5.1"]:
        raise RuntimeError(f"vLLM 0.6.6.post1 does not pin torch 2.5.1 alone: {pins}")
    env = abi.torch_env(ctx, "torch==2.5.1")
    root = abi.unpacked(ctx, *PAIR)
    rel = "vllm/vllm_flash_attn/vllm_flash_attn_c.abi3.so"
    body = ("    import importlib.machinery, importlib.util, torch\n"
            f"    loader = importlib.machinery.ExtensionFileLoader('vllm.vllm_flash_attn.vllm_flash_attn_c', {str(root / rel)!r})\n"
            "    loader.exec_module(importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader)))\n")
    ctx.call(abi.raise_again, abi.run_import(ctx, env, body))
    ctx.note(f"{rel} of vLLM 0.6.6.post1 loads next to torch 2.5.1 with Python's extension loader (the package's "
             "__init__ imports vLLM's whole engine and its dependencies, not installed here)")
