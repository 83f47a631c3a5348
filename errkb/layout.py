"""Where the dataset's files live in a data folder: the one module that knows the layout.

It imports nothing heavy, so the verification harness (which runs beside a bare torch) and the
CLI's quick paths can use it as well as errkb.store, which reads and writes the files.
"""

from __future__ import annotations

from pathlib import Path

RECORDS = "records"  # records/<area>/<record-id>.json
SITES = "sites"  # sites/<package>.jsonl, sites/<package>.fp, sites/manifest.json
IDS = "ids.txt"
SCHEMA = "schema"
PACKAGES = "packages.json"
RESULTS = Path("verification") / "results.json"
LINT_CHOICES = Path("lint") / "choices.json"  # backend names per release, for the config lint rules
BOUNDARIES = Path("versions") / "boundaries.json"  # first/last raising release per record, bisected


def default_data_dir() -> Path:
    """The dataset shipped inside the errkb distribution (the repo's data/ when editable)."""
    import errkb.data

    return Path(errkb.data.__file__).parent


def record_paths(data_dir: Path) -> list[Path]:
    return sorted((Path(data_dir) / RECORDS).glob("*/*.json"))


def record_path(data_dir: Path, area: str, record_id: str) -> Path:
    return Path(data_dir) / RECORDS / area / f"{record_id}.json"


def sites_path(data_dir: Path, package: str) -> Path:
    return Path(data_dir) / SITES / f"{package}.jsonl"


def site_paths(data_dir: Path) -> list[Path]:
    return sorted((Path(data_dir) / SITES).glob("*.jsonl"))


def fingerprints_path(data_dir: Path, package: str) -> Path:
    return Path(data_dir) / SITES / f"{package}.fp"


def fingerprint_paths(data_dir: Path) -> list[Path]:
    return sorted((Path(data_dir) / SITES).glob("*.fp"))


def manifest_path(data_dir: Path) -> Path:
    return Path(data_dir) / SITES / "manifest.json"


def ids_path(data_dir: Path) -> Path:
    return Path(data_dir) / IDS


def schema_path(data_dir: Path, name: str) -> Path:
    return Path(data_dir) / SCHEMA / name


def packages_path(data_dir: Path) -> Path:
    return Path(data_dir) / PACKAGES


def results_path(data_dir: Path) -> Path:
    return Path(data_dir) / RESULTS


def all_data_files(data_dir: Path) -> list[Path]:
    """Every file of the data folder, sorted: what the on-disk index cache is keyed by."""
    return sorted(p for p in Path(data_dir).rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def lint_choices_path(data_dir: Path) -> Path:
    return Path(data_dir) / LINT_CHOICES


def boundaries_path(data_dir: Path) -> Path:
    return Path(data_dir) / BOUNDARIES
