"""Dataset validation: everything `errkb validate` and the test suite refuse to ship."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import jsonschema
from pydantic import ValidationError

from errkb import redos, store, templates
from errkb.ids import IDS_FILE, issued_ids
from errkb.dataset import Dataset
from errkb.harvest.fingerprints import line_hash, normalise
from errkb.model import Record, Site
from errkb.schema import load_schema

LONG_COPIED_LINE = 60


@dataclass
class Report:
    records: int = 0
    sites: int = 0
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- single checks


def unsafe_pattern(template: str) -> str | None:
    """Why the template's search pattern could take more than linear time, or None when its
    step bound is certified (errkb/redos.py; the same answer on any machine under any load)."""
    try:
        redos.template_step_bound(template)
    except redos.NotLinear as exc:
        return f"search pattern has no linear-time certificate: {exc}"
    return None


def text_fields(record: Record) -> list[tuple[str, str]]:
    """(field path, text) for every free-text field a person wrote."""
    out = [("title", record.title), ("meaning", record.meaning)]
    out += [(f"triggers.conditions[{i}]", c) for i, c in enumerate(record.triggers.conditions)]
    out += [(f"situations[{i}]", s) for i, s in enumerate(record.situations)]
    for i, fix in enumerate(record.fixes):
        for name in ("title", "explanation", "before", "after", "caveats"):
            value = getattr(fix, name)
            if value:
                out.append((f"fixes[{i}].{name}", value))
    return out


def copied_lines(record: Record, fingerprints: set[str]) -> list[str]:
    """Fields that reproduce upstream code: two or more consecutive lines that stand verbatim
    near an upstream site, or one such line of 60+ characters. A lone short line is an idiom
    anyone writes (`major, _ = torch.cuda.get_device_capability()`), not a copy."""
    hits = []
    for name, text in text_fields(record):
        run: list[str] = []
        for line in [*text.splitlines(), ""]:
            norm = normalise(line)
            if norm and line_hash(norm) in fingerprints:
                run.append(norm)
                continue
            if len(run) >= 2 or any(len(r) >= LONG_COPIED_LINE for r in run):
                hits.append(f"{name}: {run[0][:80]!r}" + (f" (+{len(run) - 1} lines)" if len(run) > 1 else ""))
            run = []
    return hits


# ---------------------------------------------------------------- whole dataset


def _load_record_files(data_dir: Path, report: Report) -> list[Record]:
    schema = load_schema(data_dir, "record.schema.json")
    validator = jsonschema.Draft202012Validator(schema)
    records = []
    for path in store.record_paths(data_dir):
        rel = path.relative_to(data_dir)
        try:
            raw = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            report.errors.append(f"{rel}: not JSON: {exc}")
            continue
        for err in validator.iter_errors(raw):
            report.errors.append(f"{rel}: schema: {'/'.join(map(str, err.path))}: {err.message}")
        try:
            record = Record.model_validate(raw)
        except ValidationError as exc:
            report.errors.append(f"{rel}: model: {exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}")
            continue
        if path.stem != record.id:
            report.errors.append(f"{rel}: file name does not match id {record.id!r}")
        records.append(record)
    return records


def _check_ids(data_dir: Path, records: list[Record], report: Report) -> None:
    seen: dict[str, str] = {}
    for record in records:
        key = record.id.lower()
        if key in seen:
            report.errors.append(f"duplicate record id {record.id!r}")
        seen[key] = record.id
    registered = issued_ids(data_dir)
    for rid in sorted(set(registered) - set(seen.values())):
        report.errors.append(f"id {rid!r} was issued (data/{IDS_FILE}) but its record is gone: "
                             "ids never change or disappear; retire the record instead")
    for rid in sorted(set(seen.values()) - set(registered)):
        report.errors.append(f"id {rid!r} is not registered in data/{IDS_FILE} (run `errkb register`)")


def _check_sites(ds: Dataset, report: Report) -> None:
    for site in ds.sites.values():
        if site.package not in ds.packages:
            report.errors.append(f"site {site.id}: unknown package {site.package!r}")
        if Site.make_id(site.package, site.path, site.template) != site.id:
            report.errors.append(f"site {site.id}: id does not match its package, path and template")
        if problem := unsafe_pattern(site.template):
            report.errors.append(f"site {site.id}: {problem}")
        for occ in site.occurrences:
            if occ.version not in ds.manifest.get(site.package, {}):
                report.errors.append(f"site {site.id}: version {occ.version} was never harvested")


def _check_record(ds: Dataset, record: Record, fingerprints: set[str], report: Report) -> None:
    rid = record.id
    try:
        if templates.fullmatch(record.template, record.message) is None:
            report.errors.append(f"{rid}: message does not match its own template")
    except templates.TemplateError as exc:
        report.errors.append(f"{rid}: {exc}")
        return
    if not record.sites and not record.origin:
        report.errors.append(f"{rid}: links no harvested site and names no origin")
    linked = []
    for sid in record.sites:
        if sid in ds.sites:
            linked.append(ds.sites[sid])
        else:
            report.errors.append(f"{rid}: linked site {sid} does not exist")
    if linked and not any(templates.fullmatch(s.template, record.message) is not None for s in linked):
        report.errors.append(f"{rid}: message matches none of its linked sites' templates")
    for other in record.related:
        if other == rid:
            report.errors.append(f"{rid}: related to itself")
        elif other not in ds.records_by_id:
            report.errors.append(f"{rid}: related id {other!r} does not exist")
    for hit in copied_lines(record, fingerprints):
        report.errors.append(f"{rid}: carries upstream source code in {hit}")
    if problem := unsafe_pattern(record.template):
        report.errors.append(f"{rid}: {problem}")
    # A site only older versions have is history when another linked site carries the message
    # on; a package whose newest version has none of them means the record needs a look.
    missing = set(ds.detail(record).sites_missing_in_newest)
    by_package: dict[str, list[str]] = {}
    for sid in record.sites:
        if sid in ds.sites:
            by_package.setdefault(ds.sites[sid].package, []).append(sid)
    for package, sids in sorted(by_package.items()):
        if all(sid in missing for sid in sids):
            report.warnings.append(f"{rid}: {', '.join(sids)} gone from {package}'s newest harvested version")


def validate(data_dir: Path) -> Report:
    report = Report()
    records = _load_record_files(data_dir, report)
    try:
        ds = Dataset.load(data_dir, records=records)
    except (ValidationError, ValueError, OSError) as exc:
        report.errors.append(f"dataset does not load: {exc}")
        return report
    report.records, report.sites = len(records), len(ds.sites)
    _check_ids(data_dir, records, report)
    _check_sites(ds, report)
    fingerprints = store.read_fingerprints(data_dir)
    for record in records:
        _check_record(ds, record, fingerprints, report)
    return report
