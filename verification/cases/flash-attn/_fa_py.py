"""The Python API of a flash-attn release, imported on a machine that cannot load its kernels.

Records about flash-attn's *names and signatures* (a function renamed between 1.x and 2.x, a
keyword added in 2.6) are decided by Python before any kernel runs. `flash_attn.flash_attn_interface`
imports its compiled module at the top (`flash_attn_cuda` in 1.x, `flash_attn_2_cuda` in 2.x), so
when that module does not import here (no CUDA build on a CPU machine) an errkb stand-in takes its
place (errkb.verify.standin: importing works, calling into it is an error, never a verdict) and
the step says so. The flash-attn tree is the release's own Python files on the path (git tag
v<version>'s flash_attn/ folder, or an installed wheel); `tree_version` reads its __version__
without importing it.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from pathlib import Path


def tree_version() -> str | None:
    """flash_attn.__version__ read from the tree's __init__.py (no import), or None if absent."""
    spec = importlib.util.find_spec("flash_attn")
    if spec is None or not spec.origin:
        return None
    m = re.search(r'^__version__\s*=\s*["\']([^"\']+)["\']', Path(spec.origin).read_text(), re.M)
    return m.group(1) if m else None


def major(version: str) -> int:
    return int(version.split(".")[0])


def compiled_name(version: str) -> str:
    """The compiled module flash_attn_interface imports in that release."""
    return "flash_attn_cuda" if major(version) < 2 else "flash_attn_2_cuda"


def interface(ctx):
    """flash_attn.flash_attn_interface of the tree on the path, its compiled module stood in
    when the real one does not import. Skips the step when no tree is there."""
    version = tree_version()
    if version is None:
        ctx.skip("needs a flash-attn tree on the path (flash_attn/__init__.py with __version__)")
    ctx.note(f"flash-attn {version}")
    name = compiled_name(version)
    from errkb.verify.standin import install, is_standin

    try:
        importlib.import_module(name)
    except ImportError:
        install(name)
    if is_standin(sys.modules.get(name)):
        ctx.note(f"compiled module {name} replaced by an errkb stand-in (calling it raises)")
    return importlib.import_module("flash_attn.flash_attn_interface")


def needs(ctx, low: str | None = None, below: str | None = None, why: str = "") -> str:
    """Skip unless low <= the tree's version < below; returns the version."""
    version = tree_version()
    if version is None:
        ctx.skip("needs a flash-attn tree on the path")

    def key(v):
        return tuple(int(x) for x in re.findall(r"\d+", v.split(".post")[0])[:3])

    if (low and key(version) < key(low)) or (below and key(version) >= key(below)):
        span = " and ".join(filter(None, [f">={low}" if low else "", f"<{below}" if below else ""]))
        ctx.skip(f"needs flash-attn {span}{': ' + why if why else ''} (this is {version})")
    return version
