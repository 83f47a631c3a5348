"""Files the lent GPU's image does not have, prepared on a CPU machine into `.gpu/v11/` (ignored;
docs/verification.md says how, in words: the builder compiles code from fetched upstream snapshots,
which the project does not commit, so neither is the builder) and carried with the call
(`carry=[".gpu/v11"]`): extension builds made from upstream sources with their own flags, a PyPI
wheel, an upstream script. ERRKB_VERIFY_CARRIED names another folder. A step whose file is not there
is skipped with the command that makes it; each step notes the build lines of what it used."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

from verification.cases import _venv

REPO = Path(__file__).resolve().parents[2]
MAKE = "the .gpu/v11 files of docs/verification.md, 'The GPU's files' (then carry .gpu/v11)"


def folder() -> Path:
    return Path(os.environ.get("ERRKB_VERIFY_CARRIED") or REPO / ".gpu" / "v11")


def path(ctx, rel: str) -> Path:
    p = folder() / rel
    if not p.exists():
        ctx.skip(f"needs {rel} in {folder()} ({MAKE})")
    build = folder() / "BUILD.txt"
    if build.is_file():
        head = rel.split("/", 1)[0]
        lines = build.read_text().splitlines()
        for line in [lines[0], *(l for l in lines[1:] if head in l and "  " not in l[:66])]:
            if f"carried build: {line[:600]}" not in ctx.notes:
                ctx.note(f"carried build: {line[:600]}")
    return p


def wheel(ctx, pattern: str) -> Path:
    """A carried wheel, unpacked once under the runner's temporary root; returns the folder to put on sys.path."""
    found = sorted(folder().glob(pattern))
    if not found:
        ctx.skip(f"needs {pattern} in {folder()} ({MAKE})")
    dest = _venv._tmp_root() / f"carried-{found[0].stem}"
    if not (dest / ".errkb-unpacked").is_file():
        with zipfile.ZipFile(found[0]) as z:
            z.extractall(dest)
        (dest / ".errkb-unpacked").write_text(found[0].name)
    ctx.note(f"{found[0].name} (carried, unpacked)")
    return dest
