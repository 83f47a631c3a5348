"""`import sgl_kernel` whose common_ops library does not load: "[sgl_kernel] CRITICAL: Could not load any common_ops library!"

Real PyPI wheels on the CPU (verification/cases/_abi_wheels.py): sglang-kernel 0.4.10 (METADATA:
torch==2.14.1; its common_ops libraries link CUDA 13's runtime, nvrtc and cuBLAS and libcuda.so.1)
imported next to PyPI's torch 2.14.1 (CUDA 13.0) and 2.5.1 (CUDA 12.4), and sgl-kernel 0.3.14.post1
(CUDA 12 libraries, libnuma, libcuda.so.1) next to torch 2.14.1. With no GPU the loader picks
sm100/ (compute capability None). This machine has no NVIDIA driver, so with every other library
found the load stops on libcuda.so.1; that is what a driverless environment (a CPU machine, a
container started without GPUs, an image build step) meets, and the record's message is the
same whatever the cause. An undefined torch symbol cannot be reached here (the driver's library
comes first), so the undefined-symbol fix has no step.
"""

import os
import re

from verification.cases import _abi_wheels as abi
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
NEW = ("sglang-kernel", "0.4.10")
OLD = ("sgl-kernel", "0.3.14.post1")
IMPORT = "    import torch\n    import sgl_kernel"


def _details(message: str) -> list[str]:
    """The lines under 'Error details from previous import attempts:' (0.4.10's message)."""
    if "Error details from previous import attempts:" not in message:
        return []
    tail = message.split("Error details from previous import attempts:", 1)[1]
    return [l[2:] for l in tail.splitlines() if l.startswith("- ")]


def _import(ctx, torch: str, which=NEW):
    env = abi.torch_env(ctx, torch)
    abi.torch_line(ctx, env)
    root = abi.unpacked(ctx, *which)
    so = root / "sgl_kernel" / "sm100" / "common_ops.abi3.so"
    ctx.note(f"NEEDED of {which[0]} {which[1]} sgl_kernel/sm100/common_ops.abi3.so: " + ", ".join(abi.needed(so)))
    return env, root, abi.run_import(ctx, env, IMPORT, root)


def reproduce(ctx):
    pins = abi.requires(ctx, *NEW)
    ctx.note(f"sglang-kernel 0.4.10 METADATA: Requires-Dist {', '.join(pins)}")
    _, _, got = _import(ctx, "torch==2.14.1")
    if got:
        for label in ("Architecture-specific pattern", "Compute capability", "Expected variant", "CUDA version"):
            line = next((l for l in got[1].splitlines() if label in l), None)
            ctx.note(f"message line: {line.strip() if line else '(no ' + label + ' line)'}")
        ctx.note("Error details: " + " | ".join(_details(got[1])))
    ctx.expect_error(abi.raise_again, got)


def fix_1(ctx):
    env, root, _ = _import(ctx, "torch==2.14.1")
    cmd = "python -c \"import torch, sgl_kernel\" 2>&1 | sed -n '/Error details/,$p'"
    res = _venv.run(["bash", "-c", cmd], env=_venv.tool_env(PATH=f"{env.path / 'bin'}:{os.environ['PATH']}",
                                                              PYTHONPATH=str(root)), cwd=_venv._tmp_root(), timeout=600)

    def names_the_cause():
        lines = [l[2:] for l in res.output.splitlines() if l.startswith("- ")]
        if not lines or not res.output.startswith("Error details"):
            raise AssertionError(f"the fix's command printed no details block: {res.tail(600)}")
        if lines[-1] != "ModuleNotFoundError: No module named 'common_ops'":
            raise AssertionError(f"the last detail is not the plain-import fallback: {lines[-1]}")
        first = lines[0]
        if "common_ops" in first and "No module named" in first:
            raise AssertionError("no detail besides the fallback's")
        ctx.note(f"the fix's command (0.4.10, torch 2.14.1) prints {len(lines)} detail lines; the first: {first}")

    ctx.call(names_the_cause)
    # sgl-kernel 0.3.14.post1 (the release sglang 0.5.3 pins) raises the same headline without the block; the
    # record's caveat (corrected from this run) sends such releases to sgl_kernel's DEBUG log lines instead.
    env_old, root_old, got_old = _import(ctx, "torch==2.14.1", OLD)
    old = _venv.run(["bash", "-c", cmd], env=_venv.tool_env(PATH=f"{env_old.path / 'bin'}:{os.environ['PATH']}",
                                                             PYTHONPATH=str(root_old)), cwd=_venv._tmp_root(), timeout=600)
    dbg = _venv.run([env_old.python, "-c", "import logging; logging.basicConfig(level=logging.DEBUG)\nimport torch, sgl_kernel"],
                    env=_venv.tool_env(PYTHONPATH=str(root_old)), cwd=_venv._tmp_root(), timeout=600)
    failed = [l for l in dbg.output.splitlines() if "Failed to load" in l]
    ctx.note(f"0.3.14.post1: headline raised: {bool(got_old and 'Could not load any common_ops library' in got_old[1])}; "
             f"the fix's command prints {len(old.output.strip().splitlines())} lines; with DEBUG logging: "
             + (failed[0].strip()[:300] if failed else "no 'Failed to load' line"))

    def old_release_debug_names_the_cause():
        if not failed:
            raise AssertionError(f"0.3.14.post1 with DEBUG logging names no cause: {dbg.tail(600)}")

    ctx.call(old_release_debug_names_the_cause)


def fix_2(ctx):
    ctx.skip("every common_ops library of sglang-kernel 0.4.10 and sgl-kernel 0.3.14.post1 links libcuda.so.1 (readelf "
             "NEEDED), the driver's library, which this machine lacks: the loader stops there before binding any "
             "torch symbol, so the pinned pair's import cannot be shown to succeed here")


def fix_3(ctx):
    _, _, wrong = _import(ctx, "torch==2.5.1")
    wrong_details = _details(wrong[1]) if wrong else []
    ctx.note("0.4.10 next to torch 2.5.1 (CUDA 12.4): " + " | ".join(wrong_details))
    if not any(re.search(r"lib\w+\.so\.13: cannot open shared object file", d) for d in wrong_details):
        raise RuntimeError("next to a CUDA 12 torch the details name no CUDA 13 library: the fix's situation did not arise")
    env, _, right = _import(ctx, "torch==2.14.1")
    found = env.python_run("import site, glob; print(sorted(p.rsplit('/', 1)[1] for p in glob.glob(site.getsitepackages()[0] + '/nvidia/**/libnvrtc.so.*', recursive=True)))")
    ctx.note(f"the fix's find, next to torch 2.14.1: {found.output.strip()}")
    details = _details(right[1]) if right else []
    ctx.note("0.4.10 next to torch 2.14.1 (CUDA 13.0): " + (" | ".join(details) if details else "imported"))

    def no_cuda_major_line():
        bad = [d for d in details if re.search(r"lib(cudart|nvrtc|cublas|cublasLt)\.so\.\d+: cannot open", d)]
        if bad:
            raise ImportError(bad[0])
        if any("libcuda.so.1" in d for d in details):
            ctx.note("the CUDA 13 libraries are found; the load then stops on libcuda.so.1 (no driver on this machine), "
                     "which a GPU machine has")

    ctx.call(no_cuda_major_line)


def fix_4(ctx):
    ctx.skip("sglang-kernel 0.4.10 does not link libnuma, and this machine has libnuma.so.1: taking a system library "
             "away would be made up, not a user's environment")


def fix_5(ctx):
    ctx.skip("needs a GPU without its own build (sm121) to see kernels fail, and cuobjdump, which this CUDA 13.0 "
             "toolkit does not have")
