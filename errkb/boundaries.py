"""data/versions/boundaries.json: the first and last release that raise each record's message.

The file is written by scripts/find-version-boundaries.py, which bisects over every release
on the registry (errkb.boundary_search); this module is the one that knows its shape. Where a
record or package has no entry, its range is only bounded by the harvested releases, and the
range says so instead of claiming more.

Shape: {"packages": {package: {registry, source, releases, oldest, newest, checked_on}},
        "records": {record_id: {package: {first, first_status, before_first, last, last_status,
                                          after_last, gaps, checked: {release: true|false|null},
                                          outside_scope: {neighbour: [paths] | null}}}},
        "not_checked": {package: reason}}
"""

from __future__ import annotations

import json
from pathlib import Path

from errkb import layout
from errkb.model import ReleaseRange

HARVESTED_ONLY = "only the harvested releases were checked"


def empty() -> dict:
    return {"packages": {}, "records": {}, "not_checked": {}}


def read(data_dir: Path) -> dict:
    path = layout.boundaries_path(data_dir)
    if not path.exists():
        return empty()
    try:
        table = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc})") from exc
    return {**empty(), **table}


def write(data_dir: Path, table: dict) -> None:
    path = layout.boundaries_path(data_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    ordered = {key: dict(sorted(table[key].items())) for key in ("packages", "records", "not_checked")}
    path.write_text(json.dumps(ordered, indent=1, ensure_ascii=False) + "\n")


def release_range(table: dict, record_id: str, package: str, harvested: list[str]) -> ReleaseRange:
    """The record's range in `package`; `harvested` are the harvested releases raising it, oldest first."""
    entry = table["records"].get(record_id, {}).get(package)
    info = table["packages"].get(package, {})
    if entry is None:
        return ReleaseRange(
            first=harvested[0], first_found=False, last=harvested[-1], last_status="bounded",
            releases_checked=len(harvested), basis=table["not_checked"].get(package, HARVESTED_ONLY))
    checked = entry["checked"]
    found = entry["first_status"] == "found"
    return ReleaseRange(
        first=entry["first"], first_found=found, before_first=entry["before_first"],
        last=entry["last"], last_status=entry["last_status"], after_last=entry["after_last"],
        releases_checked=sum(ok is not None for ok in checked.values()), not_raised_between=entry["gaps"],
        basis=_basis(entry, info, package, found), checked_on=info.get("checked_on"))


def _basis(entry: dict, info: dict, package: str, found: bool) -> str:
    registry = f"{info.get('releases', '?')} releases of {package} on PyPI ({info.get('oldest')} to {info.get('newest')})"
    if found:
        return f"bisected over the {registry}"
    before = entry["before_first"]
    if before in entry.get("outside_scope", {}):
        paths = entry["outside_scope"][before]
        if paths is None:
            return f"release {before} lacks it in errkb's scope, but its other files could not be read"
        return f"release {before} raises it too, from {', '.join(paths)}, outside errkb's scope"
    if before is not None:
        return f"release {before} could not be read or holds no in-scope file in the message's language"
    if entry["first"] == info.get("oldest"):
        return f"it is the oldest of the {registry}"
    return f"it is the oldest release checked; older ones are not on PyPI (checked the {registry})"
