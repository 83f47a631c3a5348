"""Reading and writing the dataset's files: records, sites, the harvest manifest."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from errkb import layout
from errkb.model import Record, Site


def default_data_dir() -> Path:
    """The dataset shipped inside the errkb distribution (the repo's data/ when editable)."""
    return layout.default_data_dir()


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.chmod(tmp, 0o644)  # mkstemp makes 0600; dataset files are meant to be read by all
    os.replace(tmp, path)


# ---------------------------------------------------------------- sites


def site_packages(data_dir: Path) -> list[str]:
    return [p.stem for p in layout.site_paths(data_dir)]


def read_sites(data_dir: Path, package: str) -> list[Site]:
    path = layout.sites_path(data_dir, package)
    if not path.exists():
        return []
    return [Site.model_validate_json(line) for line in path.read_text().split("\n") if line.strip()]


def read_all_sites(data_dir: Path) -> list[Site]:
    return [s for pkg in site_packages(data_dir) for s in read_sites(data_dir, pkg)]


def write_sites(data_dir: Path, package: str, sites: list[Site]) -> None:
    lines = [s.model_dump_json(exclude_none=True) for s in sites]
    _atomic_write(layout.sites_path(data_dir, package), "\n".join(lines) + "\n")


def read_manifest(data_dir: Path) -> dict:
    path = layout.manifest_path(data_dir)
    return json.loads(path.read_text()) if path.exists() else {}


def record_harvest(data_dir: Path, package: str, version: str, info: dict) -> None:
    manifest = read_manifest(data_dir)
    manifest.setdefault(package, {})[version] = info
    manifest = {p: dict(sorted(v.items())) for p, v in sorted(manifest.items())}
    _atomic_write(layout.manifest_path(data_dir), json.dumps(manifest, indent=1, sort_keys=True) + "\n")


def read_fingerprints(data_dir: Path) -> set[str]:
    out: set[str] = set()
    for path in layout.fingerprint_paths(data_dir):
        out.update(path.read_text().split())
    return out


def add_fingerprints(data_dir: Path, package: str, hashes: set[str]) -> None:
    path = layout.fingerprints_path(data_dir, package)
    old = set(path.read_text().split()) if path.exists() else set()
    _atomic_write(path, "\n".join(sorted(old | hashes)) + "\n")


# ---------------------------------------------------------------- records


def record_paths(data_dir: Path) -> list[Path]:
    return layout.record_paths(data_dir)


def read_records(data_dir: Path) -> list[Record]:
    return [Record.model_validate_json(p.read_text()) for p in record_paths(data_dir)]


def write_record(data_dir: Path, folder: str, record: Record) -> Path:
    path = layout.record_path(data_dir, folder, record.id)
    body = record.model_dump(mode="json", exclude_defaults=False, exclude={"raised_at": {"__all__": {"url"}}})
    _atomic_write(path, json.dumps(body, indent=2, ensure_ascii=False) + "\n")
    return path
