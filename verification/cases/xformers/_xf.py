"""Helpers for the xformers cases that run on a CPU-only machine.

xFormers has no CPU kernel, but everything that decides *whether* a kernel may run is Python: the
dispatcher asks each kernel for its not-supported reasons (device, dtype, head dim, bias type and
alignment) and raises with all of them, `op=` checks one kernel, the module's names and the
function's signature are what they are. These cases run the real wheel (with the torch it was
built for, or deliberately another one) on CPU tensors. A fix whose point is a kernel running on
the GPU is skipped with that reason, never judged here.
"""

from __future__ import annotations

import re
import subprocess
import sys


def version_tuple(text: str) -> tuple[int, ...]:
    """'0.0.28.post3' -> (0, 0, 28); '0.0.24+cu121' -> (0, 0, 24); post/dev/local parts are ignored."""
    return tuple(int(x) for x in re.findall(r"\d+", text.split("+")[0].split(".post")[0].split(".dev")[0])[:3])


def in_range(have: str, low: str | None = None, below: str | None = None) -> bool:
    v = version_tuple(have)
    return (low is None or v >= version_tuple(low)) and (below is None or v < version_tuple(below))


def needs(ctx, low: str | None = None, below: str | None = None, why: str = "") -> None:
    """Skip the step unless low <= xformers < below (the release span the claim is about)."""
    import xformers

    if not in_range(xformers.__version__, low, below):
        span = " and ".join(filter(None, [f">={low}" if low else "", f"<{below}" if below else ""]))
        ctx.skip(f"needs xformers {span}{': ' + why if why else ''} (this is {xformers.__version__})")


def cpp_loaded() -> bool:
    """Whether xFormers' compiled extension loaded at import (False after 'can't load C++/CUDA extensions')."""
    import xformers

    return bool(getattr(xformers, "_has_cpp_library", False))


def cpu_qkv(ctx, b=1, s=16, h=2, d=64, dtype=None):
    """Small (batch, seqlen, heads, head_dim) CPU tensors, as xformers takes them."""
    t = ctx.torch
    return tuple(t.randn(b, s, h, d, dtype=dtype or t.float16) for _ in range(3))


def mea(*args, **kwargs):
    import xformers.ops as xops

    return xops.memory_efficient_attention(*args, **kwargs)


def child(args: list[str], timeout: float = 240) -> subprocess.CompletedProcess:
    """This interpreter run with `args` in a child process (a command a record tells users to run)."""
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=timeout)


def torch_pin(requirements: list[str] | None) -> str | None:
    """The exact torch version a wheel's Requires-Dist pins ('torch==2.5.1' -> '2.5.1'), or None."""
    for req in requirements or []:
        m = re.match(r"^\s*torch\s*==\s*([\w.+]+)\s*(;.*)?$", req)
        if m and not (m.group(2) and "extra" in m.group(2)):
            return m.group(1)
    return None


def matched_pair(ctx) -> str:
    """Skip unless this xformers wheel pins exactly the torch installed here; returns that version."""
    from importlib import metadata

    import torch

    pin = torch_pin(metadata.requires("xformers"))
    have = torch.__version__.split("+")[0]
    if pin != have:
        ctx.skip(f"the fix is an xformers wheel built for the torch in use; this one pins torch {pin}, torch here is {have}")
    return pin
