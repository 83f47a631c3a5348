"""The append-only register of issued record ids (data/ids.txt).

An id, once issued, never changes and never disappears: a record that is no longer right
is retired, not deleted. The register is how validation tells a rename from a new record.
"""

from __future__ import annotations

from pathlib import Path

from errkb import layout

IDS_FILE = layout.IDS


def issued_ids(data_dir: Path) -> list[str]:
    path = layout.ids_path(data_dir)
    if not path.exists():
        return []
    return [line.strip() for line in path.read_text().splitlines() if line.strip()]


def register(data_dir: Path, record_ids: list[str]) -> list[str]:
    """Append the ids not issued yet; return them."""
    issued = set(issued_ids(data_dir))
    new = sorted(set(record_ids) - issued)
    if new:
        with layout.ids_path(data_dir).open("a") as fh:
            fh.write("".join(f"{rid}\n" for rid in new))
    return new
