"""Stay current: find the releases of every harvested package that are not harvested yet, and harvest them.

A release is *missing* when it is newer than the newest harvested version of its package. The
dataset samples each package's history on purpose (one release per series, say), so older
releases that were never harvested are only counted. Yanked releases are skipped, and so are
pre-releases (rc, beta, dev) unless the package's harvested set already holds one (flash-attn-4
has published only betas so far). A package with nothing harvested lists just its latest release.

Each missing release is harvested from the same kind of file as its package's earlier ones
(`registry` in data/packages.json): a wheel or sdist checked against the registry's SHA-256, or
the release's git tag where the published files lack what the harvest reads (flash-attn's sdists
have no `hopper/`). Only `fetch_pypi` and `download` go to the network, so tests feed recorded
JSON and local files instead.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import subprocess
import tarfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import InvalidVersion, Version

from errkb import store
from errkb.drift import Drift, drift, format_drift
from errkb.harvest import HarvestReport, harvest
from errkb.model import Record, Site
from errkb.packages import PackageConfig, Registry, load_packages
from errkb.versions import newest, version_key

PYPI_URL = "https://pypi.org/pypi/{project}/json"
GIT_URL = "https://github.com/{repo}.git"
CACHE_FOLDER = ".update-cache"  # next to the data folder; ignored by git
TIMEOUT_S = 60.0


class UpdateError(Exception):
    """A registry, download or checksum problem, worded for the person reading the report."""


@dataclass(frozen=True)
class ReleaseFile:
    filename: str
    url: str
    sha256: str


@dataclass(frozen=True)
class Release:
    version: str
    uploaded: str  # day of the release's first upload, YYYY-MM-DD
    file: ReleaseFile | None = None  # the file the harvest reads
    tag: str | None = None  # or the git tag it reads instead

    @property
    def source(self) -> str:
        if self.file:
            return self.file.filename
        return f"git tag {self.tag}" if self.tag else "no file matches the package's registry.files"


@dataclass
class PackageStatus:
    package: str
    registry: str | None  # "pypi:<project>"
    harvested: list[str]
    missing: list[Release] = field(default_factory=list)
    older_unharvested: int = 0  # skipped releases between harvested ones, not listed
    problem: str | None = None  # why nothing could be listed

    @property
    def newest(self) -> str | None:
        return newest(self.harvested) if self.harvested else None

    def as_dict(self) -> dict:
        return {
            "package": self.package, "registry": self.registry, "harvested": len(self.harvested),
            "newest_harvested": self.newest, "older_unharvested": self.older_unharvested, "problem": self.problem,
            "missing": [{"version": r.version, "uploaded": r.uploaded, "tag": r.tag,
                         "file": r.file.filename if r.file else None, "url": r.file.url if r.file else None,
                         "sha256": r.file.sha256 if r.file else None} for r in self.missing],
        }


# ---------------------------------------------------------------- the registry


def fetch_pypi(project: str) -> dict:
    """PyPI's JSON description of a project: every release with its files, hashes and upload times."""
    url = PYPI_URL.format(project=urllib.parse.quote(project))
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:
            index = json.load(response)
        for files in index["releases"].values():
            for f in files:  # a mirror may answer with links relative to the page
                f["url"] = urllib.parse.urljoin(url, f["url"])
        return index
    except (urllib.error.URLError, OSError, ValueError, KeyError, TypeError) as exc:
        raise UpdateError(f"cannot read {url}: {exc!r}") from exc


def _parse(version: str) -> Version | None:
    try:
        return Version(version)
    except InvalidVersion:
        return None


def choose_file(files: list[dict], globs: tuple[str, ...]) -> ReleaseFile | None:
    """The release's file that the first matching glob names (alphabetically first on a tie)."""
    for glob in globs:
        names = sorted(f["filename"] for f in files if fnmatch.fnmatchcase(f["filename"], glob))
        if names:
            chosen = next(f for f in files if f["filename"] == names[0])
            return ReleaseFile(chosen["filename"], chosen["url"], chosen["digests"]["sha256"])
    return None


def missing_releases(harvested: list[str], index: dict, registry: Registry,
                     tag_format: str | None) -> tuple[list[Release], int]:
    """The registry's releases newer than the newest harvested one (oldest first), and how many
    older releases were skipped."""
    have = {v for v in map(_parse, harvested) if v is not None}
    allow_pre = any(v.is_prerelease for v in have)
    top = max(have) if have else None
    candidates: list[tuple[Version, str, list[dict]]] = []
    for name, files in (index.get("releases") or {}).items():
        version = _parse(name)
        live = [f for f in files or [] if not f.get("yanked")]
        if version is None or not live or (version.is_prerelease and not allow_pre) or version in have:
            continue
        candidates.append((version, name, live))
    candidates.sort(key=lambda c: c[0])
    if top is None:
        newer, older = candidates[-1:], 0
    else:
        newer = [c for c in candidates if c[0] > top]
        older = len(candidates) - len(newer)
    releases = []
    for _, name, files in newer:
        uploaded = min((f.get("upload_time_iso_8601") or f.get("upload_time") or "")[:10] for f in files)
        if registry.git_tag:
            releases.append(Release(name, uploaded, tag=tag_format.format(version=name) if tag_format else None))
        else:
            releases.append(Release(name, uploaded, file=choose_file(files, registry.files)))
    return releases, older


def package_statuses(data_dir: Path, packages: list[str] | None = None,
                     fetch: Callable[[str], dict] | None = None) -> list[PackageStatus]:
    """What each package (all of data/packages.json by default) is missing; a registry that cannot be
    read is reported on its package, not raised."""
    fetch = fetch or fetch_pypi
    configs = load_packages(data_dir)
    manifest = store.read_manifest(data_dir)
    indexes: dict[str, dict | UpdateError] = {}  # torch and pytorch-headers share one project
    out = []
    for name in packages or list(configs):
        cfg = configs[name]
        harvested = sorted(manifest.get(name, {}), key=version_key)
        if cfg.registry is None:
            out.append(PackageStatus(name, None, harvested, problem="not released on a registry"))
            continue
        status = PackageStatus(name, f"pypi:{cfg.registry.pypi}", harvested)
        if cfg.registry.pypi not in indexes:
            try:
                indexes[cfg.registry.pypi] = fetch(cfg.registry.pypi)
            except UpdateError as exc:
                indexes[cfg.registry.pypi] = exc
        index = indexes[cfg.registry.pypi]
        if isinstance(index, UpdateError):
            status.problem = str(index)
        else:
            status.missing, status.older_unharvested = missing_releases(harvested, index, cfg.registry, cfg.tag)
        out.append(status)
    return out


# ---------------------------------------------------------------- fetching a release


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_sha256(path: Path, expected: str) -> None:
    """Refuse a file whose hash is not the registry's: delete it and say so."""
    actual = sha256_of(path)
    if actual != expected.lower():
        path.unlink()
        raise UpdateError(f"{path.name}: SHA-256 {actual} is not the registry's {expected}; the file was deleted")


def download(file: ReleaseFile, folder: Path) -> Path:
    """The release file in `folder`, downloaded unless a copy with the right hash is there."""
    if "/" in file.filename or "\\" in file.filename or file.filename.startswith("."):
        raise UpdateError(f"refusing the registry's file name {file.filename!r}")
    folder.mkdir(parents=True, exist_ok=True)
    dest = folder / file.filename
    if dest.exists() and sha256_of(dest) == file.sha256.lower():
        return dest
    part = folder / (file.filename + ".part")
    try:
        with urllib.request.urlopen(file.url, timeout=TIMEOUT_S) as response, open(part, "wb") as out:
            for block in iter(lambda: response.read(1 << 20), b""):
                out.write(block)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        part.unlink(missing_ok=True)
        raise UpdateError(f"cannot download {file.url}: {exc}") from exc
    check_sha256(part, file.sha256)
    part.replace(dest)
    return dest


def checkout_tag(repo: str, tag: str, folder: Path) -> tuple[str, str]:
    """A shallow bare clone of one tag; returns the harvest source and the commit it pins."""
    dest = folder / "repo"  # the harvest names a git source '<folder>@<tag>': 'repo@v2.8.3', as before
    if not dest.exists():
        folder.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(["git", "clone", "--quiet", "--bare", "--depth", "1", "--branch", tag,
                               GIT_URL.format(repo=repo), str(dest)], capture_output=True, text=True)
        if proc.returncode:
            raise UpdateError(f"cannot clone tag {tag} of {repo}: {proc.stderr.strip()}")
    commit = subprocess.run(["git", "-C", str(dest), "rev-parse", f"{tag}^{{commit}}"],
                            capture_output=True, text=True, check=True).stdout.strip()
    return f"git:{dest}@{tag}", commit


# ---------------------------------------------------------------- harvesting and reporting


@dataclass(frozen=True)
class RecordChange:
    record: str
    change: str  # appeared | moved | reworded | vanished
    site: str
    where: str


@dataclass
class Harvested:
    release: Release
    pin: str  # "sha256:<hex>" of the file, or "commit:<sha>" of the tag
    report: HarvestReport
    drift: Drift | None
    drift_note: str | None  # why there is no drift
    records: list[RecordChange]


def record_changes(records: list[Record], sites: list[Site], report: Drift) -> list[RecordChange]:
    """Records whose sites the new release moved, reworded or dropped, and new copies of their messages."""
    linked: dict[str, list[str]] = defaultdict(list)
    for record in records:
        for sid in record.sites:
            linked[sid].append(record.id)
    explained = {s.template: linked[s.id] for s in sites if s.id in linked}

    def at(site: Site, version: str) -> str:
        return f"{site.path}:{next(o.lines[0] for o in site.occurrences if o.version == version)}"

    out = []
    for new in report.added:
        for rid in sorted(set(linked.get(new.id, []) + explained.get(new.template, []))):
            out.append(RecordChange(rid, "appeared", new.id, at(new, report.new)))
    for old, new in report.moved:
        for rid in linked.get(old.id, []):
            out.append(RecordChange(rid, "moved", old.id, f"{at(old, report.old)} -> {at(new, report.new)}"))
    for old, new, _ in report.reworded:
        for rid in linked.get(old.id, []):
            out.append(RecordChange(rid, "reworded", old.id, f"{at(old, report.old)} -> {at(new, report.new)}"))
    for old in report.removed:
        for rid in linked.get(old.id, []):
            out.append(RecordChange(rid, "vanished", old.id, at(old, report.old)))
    return sorted(out, key=lambda c: (c.record, c.change, c.site))


def harvest_missing(cfg: PackageConfig, status: PackageStatus, data_dir: Path, cache_dir: Path,
                    limit: int | None = None) -> Iterator[Harvested]:
    """Harvest the package's missing releases, oldest first, each compared with the one before."""
    previous = status.newest
    records = store.read_records(data_dir)
    for release in [r for r in status.missing if r.file or r.tag][:limit]:
        try:
            if release.file:
                path = download(release.file, cache_dir / cfg.registry.pypi)  # type: ignore[union-attr]
                source, pin = str(path), f"sha256:{release.file.sha256}"
            else:
                source, commit = checkout_tag(cfg.repo, release.tag, cache_dir / cfg.name / release.version)  # type: ignore[arg-type]
                pin = f"commit:{commit}"
            report = harvest(cfg.name, release.version, source, data_dir)
        except (OSError, ValueError, zipfile.BadZipFile, tarfile.TarError, subprocess.CalledProcessError) as exc:
            raise UpdateError(f"harvesting {cfg.name} {release.version} from {release.source} failed: {exc!r}") from exc
        sites = store.read_sites(data_dir, cfg.name)
        change, note, changed = None, None, []
        if previous is None:
            note = "first harvested version"
        else:
            try:
                change = drift(sites, previous, release.version)
                changed = record_changes(records, store.read_all_sites(data_dir), change)
            except ValueError as exc:  # a version with no sites in scope
                note = str(exc)
        yield Harvested(release, pin, report, change, note, changed)
        previous = release.version


def format_statuses(statuses: list[PackageStatus], limit: int | None = None) -> str:
    """The dry-run table, then each release that would be harvested with its file and hash."""
    rows = [f"{'package':<18} {'registry':<22} {'harvested':>9}  {'newest harvested':<17} {'older skipped':>13}  missing"]
    for s in statuses:
        if s.problem:
            missing = f"- ({s.problem})"
        else:
            missing = f"{len(s.missing)}: {', '.join(r.version for r in s.missing)}" if s.missing else "none"
        rows.append(f"{s.package:<18} {s.registry or '-':<22} {len(s.harvested):>9}  {s.newest or '-':<17} "
                    f"{s.older_unharvested if s.registry else '-':>13}  {missing}")
    plan = [f"  {s.package} {r.version}  uploaded {r.uploaded}  {r.source}"
            + (f"  sha256:{r.file.sha256}" if r.file else "")
            for s in statuses if not s.problem for r in s.missing[:limit]]
    if plan:
        rows += ["", "releases to harvest" + (f" (at most {limit} per package)" if limit else "") + ":", *plan]
    return "\n".join(rows)


def format_harvested(item: Harvested) -> str:
    r = item.report
    out = [f"harvested {r.package} {r.version} from {item.release.source} ({item.pin}): "
           f"{r.files} files, {r.sites} sites, {r.templates} distinct templates"]
    out.append(format_drift(item.drift) if item.drift else f"no drift: {item.drift_note}")
    if item.records:
        out.append(f"records whose sites changed ({len(item.records)}):")
        out += [f"  {c.record:<40} {c.change:<9} {c.site}  {c.where}" for c in item.records]
    return "\n".join(out)
