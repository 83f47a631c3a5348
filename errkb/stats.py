"""Dataset counts for `errkb stats` and the API's health endpoint."""

from __future__ import annotations

from pathlib import Path

from errkb.dataset import Dataset


def compute_stats(data_dir: Path | None = None, ds: Dataset | None = None) -> dict:
    ds = ds or Dataset.load(data_dir)
    packages = {}
    for name in sorted({s.package for s in ds.sites.values()} | set(ds.manifest)):
        sites = [s for s in ds.sites.values() if s.package == name]
        packages[name] = {
            "versions": ds.harvested_versions(name),
            "sites": len(sites),
            "templates": len({s.template for s in sites}),
            "records": sum(1 for r in ds.records if any(sid.startswith(name + ":") for sid in r.sites)),
        }
    by_backend: dict[str, int] = {}
    for record in ds.records:
        for backend in record.backends:
            by_backend[backend] = by_backend.get(backend, 0) + 1
    from errkb.verify import summary as verification_summary

    return {
        "records": len(ds.records),
        "sites": len(ds.sites),
        "templates": len({(s.package, s.template) for s in ds.sites.values()}),
        "packages": packages,
        "records_by_backend": dict(sorted(by_backend.items())),
        "verification": verification_summary(ds.data_dir),
    }
