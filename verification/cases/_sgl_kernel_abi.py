"""`import sgl_kernel` from real sgl-kernel wheels next to a chosen torch and a stub driver, on the CPU.

The common_ops libraries of sgl-kernel 0.3.5 and 0.3.14.post1 list libcuda.so.1 as NEEDED; with no driver
here the loader stops on that library first (sgl-kernel-common-ops-load-failed). With a stub libcuda.so.1
of a given CUDA release on LD_LIBRARY_PATH (verification/cases/_driver_stub.py) the loader goes on and
binds symbols, as on a GPU machine whose driver supports that CUDA version: a torch other than the one the
wheel was built against, or a driver function the stub's release lacks, then stops it with the dynamic
loader's 'undefined symbol'. The pairs come from sglang's own wheel metadata (PINS): sglang 0.5.1 requires
torch==2.8.0 with sgl-kernel==0.3.5, sglang 0.5.3 torch==2.8.0 with sgl-kernel==0.3.14.post1; sgl-kernel's
own metadata names no torch. torch is PyPI's CUDA build through uv's cache (_abi_wheels.torch_env): 2.8.0
(the pinned one) and 2.9.1 (an upgrade; CUDA 12.8 like 2.8.0, so every CUDA 12 library common_ops needs
is loaded by `import torch` and only torch's own symbols differ). Each import runs in a child process.
"""

from __future__ import annotations

import json

from verification.cases import _abi_wheels as abi
from verification.cases import _driver_stub as stub
from verification.cases import _venv

SGLANG_PAIRS = {"0.5.1": ("sgl-kernel", "0.3.5"), "0.5.3": ("sgl-kernel", "0.3.14.post1")}
IMPORT = "    import torch\n    import sgl_kernel\n    print('ERRKB-IMPORTED', sgl_kernel.__file__)"


def pins(ctx, sglang: str) -> dict[str, str]:
    """{'torch': ..., 'sgl-kernel': ...}: the exact pins of sglang `sglang`'s wheel METADATA (markers cut
    off); checked against SGLANG_PAIRS and noted."""
    got = {}
    for name in ("torch", "sgl-kernel"):
        exact = [p.split("==", 1)[1] for p in abi.requires(ctx, "sglang", sglang, name) if "==" in p]
        if len(set(exact)) != 1:
            raise RuntimeError(f"sglang {sglang} does not pin one {name}: {exact}")
        got[name] = exact[0]
    if got["sgl-kernel"] != SGLANG_PAIRS[sglang][1]:
        raise RuntimeError(f"sglang {sglang} pins sgl-kernel {got['sgl-kernel']}, not {SGLANG_PAIRS[sglang][1]}")
    kernel = abi.requires(ctx, *SGLANG_PAIRS[sglang], "torch")
    ctx.note(f"sglang {sglang} METADATA pins torch=={got['torch']}, sgl-kernel=={got['sgl-kernel']}; sgl-kernel "
             f"{got['sgl-kernel']} METADATA: {'Requires-Dist ' + ', '.join(kernel) if kernel else 'no torch requirement'}")
    return got


def common_ops(root, release: str):
    """The common_ops library `import sgl_kernel` loads here (no GPU: 0.3.14.post1 picks sm100/)."""
    sub = "sm100/" if release != "0.3.5" else ""
    return root / "sgl_kernel" / f"{sub}common_ops.abi3.so"


def import_kernel(ctx, release: str, torch: str, driver: str, *, debug: bool = False):
    """`import torch; import sgl_kernel` of sgl-kernel `release` next to PyPI's `torch` (a version) with CUDA
    `driver`'s stub libcuda.so.1. Returns ((class, message) raised or None, the child's output); with `debug`
    the child logs at DEBUG first (sgl_kernel 0.3.14.post1 writes each failed load there)."""
    env = abi.torch_env(ctx, f"torch=={torch}")
    abi.torch_line(ctx, env)
    root = abi.unpacked(ctx, "sgl-kernel", release)
    folder = stub.libcuda(ctx, driver)
    body = ("    import logging; logging.basicConfig(level=logging.DEBUG)\n" if debug else "") + IMPORT
    code = abi.PROBE.format(body=body, mark=abi.MARK)
    res = env.python_run(code, timeout=600, cwd=_venv._tmp_root(), PYTHONPATH=str(root), LD_LIBRARY_PATH=str(folder))
    line = next((l for l in res.output.splitlines() if l.startswith(abi.MARK)), None)
    if line is None:
        raise RuntimeError(f"the child printed no result: {res.tail(800)}")
    got = json.loads(line[len(abi.MARK):])
    got = None if got is None else (got[0], got[1])
    ctx.note(f"sgl-kernel {release}, torch {torch}, CUDA {driver} stub driver: `import torch; import sgl_kernel` -> "
             + (f"{got[0]}: {got[1][:300]}" if got else "imported"))
    return got, res.output
