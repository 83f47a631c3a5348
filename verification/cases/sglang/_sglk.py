"""Helpers for the cases on sgl-kernel's Python wrapper, sgl_kernel/flash_attn.py, as shipped by
the sgl-kernel 0.3.21 and sglang-kernel 0.4.10 wheels (both install the `sgl_kernel` package).

Only the wheels' Python files are carried (payload sgl-kernel-py, `make gpu-payload`): their compiled
modules (flash_ops is 0.85 to 1.1 GB; common_ops) are built for torch 2.14 and cannot load beside
this machine's torch, so they are absent. `ERRKB_SGL_KERNEL_PY` names the folder holding one
unpacked tree per wheel (`sgl_kernel-0.3.21/`, `sglang_kernel-0.4.10/`); without it the steps
are skipped.

`kernel_package` makes `sgl_kernel` importable as that wheel lays it out, minus the compiled part:
a package object whose path is the wheel's sgl_kernel folder, so every submodule is imported from
the wheel's own file and runs as is. Its `__init__.py` is not run: all it does is load the
compiled common_ops for the GPU and re-export compiled ops, which cannot load here, and the
wrapper under test does not read those re-exports. An absent compiled submodule (flash_ops)
fails to import as it would in a broken install; where a step needs the wrapper itself to load,
flash_ops gets an errkb stand-in (calling it raises StandInReached, an error, never a verdict).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import os
import sys
import types
from contextlib import contextmanager
from pathlib import Path

from errkb.verify.standin import install

ENV = "ERRKB_SGL_KERNEL_PY"
WHEELS = {"sgl-kernel 0.3.21": "sgl_kernel-0.3.21", "sglang-kernel 0.4.10": "sglang_kernel-0.4.10"}
# the wheels' other top-level packages their Python files import (0.3.21's FA4 interface)
_TOPS = ("sgl_kernel", "flash_attn_origin")


def wheel_root(ctx, wheel: str) -> Path:
    root = os.environ.get(ENV)
    if not root:
        ctx.skip(f"needs the Python files of {wheel} ({ENV} is not set; `make gpu-payload` packs them)")
    path = Path(root) / WHEELS[wheel]
    if not (path / "sgl_kernel" / "flash_attn.py").is_file():
        ctx.skip(f"needs the Python files of {wheel} (no {path}/sgl_kernel/flash_attn.py)")
    return path


def _ours(name: str) -> bool:
    return name.split(".")[0] in _TOPS


def flash_attn_module(ctx, wheel: str):
    """`sgl_kernel.flash_attn` of `wheel` (call inside kernel_package). 0.3.21's module also imports
    its bundled FA4 (flash_attn_origin) and tolerates only an ImportError there; against a CuTe DSL
    other than the one that FA4 copy was written for it fails otherwise (e.g. an AttributeError on
    CuTe DSL 4.8.1) and takes the whole module down. That is a mismatch of this machine's packages,
    not the claim, so the step is skipped with the reason."""
    try:
        return importlib.import_module("sgl_kernel.flash_attn")
    except ImportError:
        raise
    except Exception as exc:  # noqa: BLE001 - looked at below
        import traceback

        if any(part in f.filename for f in traceback.extract_tb(exc.__traceback__)
               for part in ("_fa4_interface", "flash_attn_origin")):
            ctx.skip(f"{wheel}'s sgl_kernel.flash_attn does not import here: its bundled FA4 fails against "
                     f"this machine's CuTe DSL ({type(exc).__name__}: {str(exc)[:200]})")
        raise


def each_wrapper(ctx, standin: tuple[str, ...] = ("flash_ops",)):
    """(wheel, its sgl_kernel.flash_attn) for each kernel wheel whose module loads here, inside
    kernel_package; a wheel whose module does not load is noted, and if none loads the step is
    skipped."""
    from errkb.verify.case import Skip

    loaded = 0
    for wheel in WHEELS:
        with kernel_package(ctx, wheel, standin=standin):
            try:
                module = flash_attn_module(ctx, wheel)
            except Skip as why:
                ctx.note(str(why))
                continue
            loaded += 1
            yield wheel, module
    if not loaded:
        ctx.skip("no kernel wheel's sgl_kernel.flash_attn loads here")


@contextmanager
def kernel_package(ctx, wheel: str, standin: tuple[str, ...] = ()):
    """`sgl_kernel` as `wheel` ships it, without its compiled modules (see the module docstring),
    for the duration of the block; `standin` names compiled submodules (e.g. "flash_ops") to stand
    in for. Whatever sgl_kernel was loaded before (the server cases' stand-in) is put back after."""
    root = wheel_root(ctx, wheel)
    saved = {name: sys.modules.pop(name) for name in [m for m in sys.modules if _ours(m)]}
    package = types.ModuleType("sgl_kernel", f"sgl_kernel of {wheel}, Python files only (__init__ not run)")
    folder = str(root / "sgl_kernel")
    package.__spec__ = importlib.machinery.ModuleSpec("sgl_kernel", None, is_package=True)
    package.__spec__.submodule_search_locations = [folder]
    package.__path__ = [folder]
    sys.modules["sgl_kernel"] = package
    sys.path.insert(0, str(root))  # the wheel's flash_attn_origin (0.3.21's vendored FA4)
    importlib.invalidate_caches()
    added = install(*(f"sgl_kernel.{name}" for name in standin))
    ctx.note(f"sgl_kernel from the {wheel} wheel's Python files ({folder}); its __init__ (loading the "
             "compiled common_ops) not run; its compiled modules absent"
             + (f", except errkb stand-ins for {', '.join(added)} (calling them raises)" if added else ""))
    try:
        yield package
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if _ours(m)]:
            del sys.modules[name]
        sys.modules.update(saved)
        importlib.invalidate_caches()

