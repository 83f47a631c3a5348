"""Where flash-attn's Triton prototype (flash_attn/flash_attn_triton.py) is on this path: the two
cases about it, one compiling its kernel and one calling it, read the same file."""

from __future__ import annotations

import importlib.util
from pathlib import Path


def prototype_path(ctx) -> Path:
    """The prototype's file in the flash-attn tree on the path; the step is skipped without one."""
    spec = importlib.util.find_spec("flash_attn")
    if spec is None or not spec.submodule_search_locations:
        ctx.skip("needs the flash-attn Python tree on the path (flash_attn/flash_attn_triton.py)")
    path = Path(list(spec.submodule_search_locations)[0]) / "flash_attn_triton.py"
    if not path.is_file():
        ctx.skip(f"{path} is not in this flash-attn tree")
    return path
