"""The loaded dataset: records, sites and what is derived from linking them.

Where a record is raised and which versions raise it are derived from its sites here, so
the record files never repeat what the harvested sites already say.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from errkb import boundaries, store
from errkb.model import (AffectedVersions, EntryPointResult, Record, RecordDetail, Site, SourceLocation,
                         VerificationRun)
from errkb.packages import PackageConfig, load_packages
from errkb.verify import results as verification_results
from errkb.versions import version_key


@dataclass
class Dataset:
    data_dir: Path
    records: list[Record]
    sites: dict[str, Site]
    packages: dict[str, PackageConfig]
    manifest: dict = field(default_factory=dict)
    verification: dict = field(default_factory=dict)  # data/verification/results.json
    boundaries: dict = field(default_factory=boundaries.empty)  # data/versions/boundaries.json

    @classmethod
    def load(cls, data_dir: Path | None = None, records: list[Record] | None = None) -> "Dataset":
        """Load everything; `records` replaces the record files (validation reads them itself)."""
        data_dir = data_dir or store.default_data_dir()
        return cls(
            data_dir=data_dir,
            records=store.read_records(data_dir) if records is None else records,
            sites={s.id: s for s in store.read_all_sites(data_dir)},
            packages=load_packages(data_dir),
            manifest=store.read_manifest(data_dir),
            verification=verification_results.load(data_dir),
            boundaries=boundaries.read(data_dir),
        )

    @cached_property
    def records_by_id(self) -> dict[str, Record]:
        return {r.id: r for r in self.records}

    def harvested_versions(self, package: str) -> list[str]:
        """Every harvested version of a package, oldest first."""
        return sorted(self.manifest.get(package, {}), key=version_key)

    def newest_version(self, package: str) -> str | None:
        versions = self.harvested_versions(package)
        return versions[-1] if versions else None

    def location(self, site: Site) -> SourceLocation:
        """Where a site stands in the newest version that has it."""
        occ = site.occurrences[-1]
        cfg = self.packages[site.package]
        return SourceLocation(
            package=site.package, version=occ.version, repo=cfg.repo, path=site.path,
            line=occ.lines[0], ref=cfg.ref_for(occ.version))

    def affected(self, sites: list[Site], record_id: str) -> list[AffectedVersions]:
        per_package: dict[str, set[str]] = {}
        for site in sites:
            per_package.setdefault(site.package, set()).update(site.versions)
        out = []
        for package, versions in sorted(per_package.items()):
            ordered = sorted(versions, key=version_key)
            harvested = self.harvested_versions(package)
            later = [v for v in harvested if version_key(v) > version_key(ordered[-1])]
            out.append(AffectedVersions(
                package=package, first_seen=ordered[0], last_seen=ordered[-1],
                removed_in=later[0] if later else None, versions=ordered,
                releases=boundaries.release_range(self.boundaries, record_id, package, ordered)))
        return out

    def verification_runs(self, record_id: str) -> list[VerificationRun]:
        envs = self.verification.get("environments", {})
        runs: dict[str, VerificationRun] = {}
        for r in self.verification.get("results", []):
            if r["record"] != record_id:
                continue
            env = envs.get(r["env_id"], {})
            run = runs.setdefault(r["env_id"], VerificationRun(
                environment=r["env_id"], gpu=env.get("gpu") or "none (CPU only)",
                compute_capability=env.get("compute_capability"), torch=env.get("torch"),
                libraries=env.get("libraries", {}), cases={}))
            run.cases[r["case"]] = r["status"]
            run.finished_at = max(run.finished_at or "", r.get("finished_at") or "") or None
        return list(runs.values())

    def entry_point_results(self, record: Record) -> list[EntryPointResult]:
        """Each of the record's entry points with what its `entry-<kind>` step showed, per environment."""
        from errkb.verify.results import entry_verdict

        envs = self.verification.get("environments", {})
        out = []
        for point in record.entry_points:
            case = f"{record.id}:entry-{point.kind}"
            runs = [r for r in self.verification.get("results", []) if r["case"] == case]
            for r in sorted(runs, key=lambda r: r["env_id"]):
                env, verdict, obs = envs.get(r["env_id"], {}), entry_verdict(r), r.get("observed") or {}
                first = f"{obs.get('class')}: {obs.get('message')}" if verdict == "preempted" and obs.get("class") else None
                out.append(EntryPointResult(
                    kind=point.kind, call=point.call, case=case, verdict=verdict, first_seen=first,
                    environment=r["env_id"], gpu=env.get("gpu") or "none (CPU only)",
                    compute_capability=env.get("compute_capability")))
            if not runs:
                out.append(EntryPointResult(kind=point.kind, call=point.call, case=case, verdict="not-run"))
        return out

    def detail(self, record: Record) -> RecordDetail:
        sites = [self.sites[sid] for sid in record.sites if sid in self.sites]
        missing = [s.id for s in sites if s.versions[-1] != self.newest_version(s.package)]
        return RecordDetail(
            **record.model_dump(),
            packages=sorted({s.package for s in sites}),
            raised_at=[self.location(s) for s in sites],
            affected=self.affected(sites, record.id),
            sites_missing_in_newest=missing,
            verified_in=self.verification_runs(record.id),
            entry_point_results=self.entry_point_results(record),
        )
