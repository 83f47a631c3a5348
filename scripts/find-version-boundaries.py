#!/usr/bin/env python3
"""Find, for every record with sites, the first and last release of each package that raises
its message, by bisecting over all of the registry's releases (errkb.boundary_search), and
write data/versions/boundaries.json (errkb.boundaries reads it).

Needs the network (PyPI) and, for flash-attn, a clone of Dao-AILab/flash-attention ($FA_REPO),
whose tags are read because its sdists lack hopper/. A release is read as the harvest reads it:
a wheel's in-scope files are fetched with HTTP range requests (a 1 GB torch wheel costs its
zip directory and a few files), an sdist is downloaded whole; everything is cached under
--cache, never committed. Each release is harvested once and every record is tested against it.

  .venv/bin/python scripts/find-version-boundaries.py                  # every package
  .venv/bin/python scripts/find-version-boundaries.py --packages vllm  # merge one package in
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import datetime as dt
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import urllib.parse
import urllib.request
import zipfile
from collections import defaultdict
from pathlib import Path

from errkb import boundaries
from errkb.boundary_search import Check, search
from errkb.dataset import Dataset
from errkb.harvest import extract_sites, python_sites
from errkb.harvest.sources import MAX_FILE_BYTES, SOURCE_SUFFIXES, iter_source
from errkb.packages import PackageConfig
from errkb.versions import version_key

PYPI_PROJECT = {"pytorch-headers": "torch"}  # errkb package -> PyPI project, where they differ
PREFER_SDIST = {"vllm"}  # harvested from sdists: they carry csrc/, and the wheels add a vendored FA the sdists lack
GIT_TAGS = {"flash-attn": "FA_REPO"}  # read from the tags of a clone named by this variable
DEFAULT_REPOS = {"FA_REPO": "../.mirror/Dao-AILab+flash-attention/repo"}
NOT_RELEASES = {"pytorch-aten": "its sites come from several PyTorch commits read through a search index, "
                                "grouped under one label, not from releases"}


def _get(url: str, headers: dict | None = None) -> bytes:
    request = urllib.request.Request(url, headers={"User-Agent": "errkb-version-boundaries", **(headers or {})})
    with urllib.request.urlopen(request, timeout=120) as response:
        return response.read()


class RemoteFile(io.RawIOBase):
    """A file on an HTTP server read by range requests, in 256 KiB blocks, for zipfile."""

    BLOCK = 256 * 1024

    def __init__(self, url: str, size: int):
        self.url, self.size, self.pos, self.blocks, self.fetched = url, size, 0, {}, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = 0) -> int:
        self.pos = {0: offset, 1: self.pos + offset, 2: self.size + offset}[whence]
        return self.pos

    def readinto(self, buffer) -> int:
        n = max(0, min(len(buffer), self.size - self.pos))
        if n == 0:
            return 0
        first, last = self.pos // self.BLOCK, (self.pos + n - 1) // self.BLOCK
        missing = [b for b in range(first, last + 1) if b not in self.blocks]
        if missing:
            start, end = missing[0] * self.BLOCK, min(self.size, (missing[-1] + 1) * self.BLOCK) - 1
            data = _get(self.url, {"Range": f"bytes={start}-{end}"})
            self.fetched += len(data)
            for b in range(missing[0], missing[-1] + 1):
                self.blocks[b] = data[(b - missing[0]) * self.BLOCK:(b - missing[0] + 1) * self.BLOCK]
        data = b"".join(self.blocks[b] for b in range(first, last + 1))
        offset = self.pos - first * self.BLOCK
        buffer[:n] = data[offset:offset + n]
        self.pos += n
        return n


class Releases:
    """One package's releases on PyPI (or its git tags) and what each one raises, cached."""

    def __init__(self, cfg: PackageConfig, cache: Path):
        self.cfg, self.cache = cfg, cache
        self.project = PYPI_PROJECT.get(cfg.name, cfg.name)
        listing = cache / "pypi" / f"{self.project}.json"
        if not listing.exists():
            listing.parent.mkdir(parents=True, exist_ok=True)
            listing.write_bytes(_get(f"https://pypi.org/pypi/{self.project}/json"))
        self.files = {v: f for v, f in json.loads(listing.read_text())["releases"].items() if f}
        self.versions = sorted(self.files, key=version_key)
        self.wide_cfg = dataclasses.replace(cfg, include=(*cfg.include, "**/*.py"), exclude=("**/tests/*", "**/test_*"))
        self.read = 0  # releases read from the network (or the clone) in this run
        self.fetched_bytes = 0

    def source(self) -> str:
        if self.cfg.name in GIT_TAGS:
            return "git tags of the " + self.cfg.repo + " repository, one per PyPI release (the sdist where untagged)"
        if self.cfg.name in PREFER_SDIST:
            return "PyPI: the sdist, as the harvest reads it, or a wheel's in-scope files when a release has no sdist"
        return "PyPI: in-scope files of a wheel (HTTP range requests), or the sdist when a release has no wheel"

    def sites(self, version: str) -> Probe | None:
        """The in-scope files of a release and the (path, template) of every site they hold;
        None if unreadable."""
        cached = self.cache / "probe" / self.cfg.name / f"{version}.json"
        if cached.exists() and isinstance(found := json.loads(cached.read_text()), dict):
            return Probe(set(found["files"]), {tuple(s) for s in found["sites"]})
        self.read += 1
        try:
            raw, scoped, _ = extract_sites(self.cfg, self._fetch(version, self.cfg, False))
            found = {"files": sorted(scoped), "sites": sorted({(r.path, r.template) for r in raw})}
        except Exception as exc:  # a missing tag, a broken archive, a network error: the release stays unread
            print(f"  {self.cfg.name} {version}: not read ({type(exc).__name__}: {exc})", file=sys.stderr)
            return None  # not cached: a later run tries again
        cached.parent.mkdir(parents=True, exist_ok=True)
        cached.write_text(json.dumps(found))
        return Probe(set(found["files"]), {tuple(s) for s in found["sites"]})

    def outside_scope(self, version: str, target: Target) -> list[str] | None:
        """Python files outside errkb's scope whose sites raise the target's message in this
        release (a message that moved); None if the release cannot be read. Only files that
        contain one of the message's longest words are parsed."""
        try:
            files = self._outside_files(version)
            paths = set()
            for path, text in files:
                if target.keywords() and not any(word in text for word in target.keywords()):
                    continue
                for raw in self._extract(version, path, text):
                    if shape(raw.template) in target.shapes and (raw.path, shape(raw.template)) not in target.elsewhere:
                        paths.add(raw.path)
            return sorted(paths)
        except Exception as exc:
            print(f"  {self.cfg.name} {version}: not read widely ({type(exc).__name__}: {exc})", file=sys.stderr)
            return None

    @functools.lru_cache(maxsize=4)
    def _outside_files(self, version: str) -> list[tuple[str, str]]:
        self.read += 1
        source = self._fetch(version, self.wide_cfg, True)
        files = iter_source(source)
        if source.startswith("git:"):
            files = ((self.cfg.dist_path(path), text) for path, text in files)
        return [(path, text) for path, text in files
                if path.endswith(".py") and not self.cfg.in_scope(path) and self.wide_cfg.in_scope(path)]

    @functools.lru_cache(maxsize=4096)
    def _extract(self, version: str, path: str, text: str) -> list:
        return python_sites.extract(self.cfg.repo_path(path), text, info_lines=self.cfg.info_lines)

    def _fetch(self, version: str, cfg: PackageConfig, wide: bool) -> str:
        if self.cfg.name in GIT_TAGS:
            repo = os.environ.get(GIT_TAGS[self.cfg.name], DEFAULT_REPOS[GIT_TAGS[self.cfg.name]])
            tag = self.cfg.ref_for(version)
            if subprocess.run(["git", "-C", repo, "rev-parse", "-q", "--verify", f"refs/tags/{tag}"],
                              capture_output=True).returncode == 0:
                return f"git:{repo}@{tag}"
            # An untagged release (flash-attn 0.2.0, 2.0.0.post1): its sdist, which lacks only hopper/.
        folder = self.cache / ("src-wide" if wide else "src") / self.cfg.name / version
        if folder.exists():
            return str(folder)
        files = self.files.get(version)
        if not files:
            raise LookupError("not on PyPI")
        wheels = [f for f in files if f["packagetype"] == "bdist_wheel"]
        pure = [f for f in wheels if f["filename"].endswith("-none-any.whl")]
        linux = [f for f in wheels if "manylinux" in f["filename"] and "x86_64" in f["filename"]]
        sdists = [f for f in files if f["packagetype"] == "sdist"]
        chosen = ((sdists if self.cfg.name in PREFER_SDIST else []) + pure + linux + wheels + sdists)[0]
        members = self._members(chosen, cfg)
        tmp = folder.with_name(version + ".part")
        for path, data in members:
            target = tmp / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        tmp.mkdir(parents=True, exist_ok=True)
        tmp.rename(folder)
        return str(folder)

    def _members(self, file: dict, cfg: PackageConfig) -> list[tuple[str, bytes]]:
        """The release's source files, named as its wheel names them (sdists are repo-shaped)."""
        name, is_wheel = file["filename"], file["packagetype"] == "bdist_wheel"
        if name.endswith((".whl", ".zip")):
            remote = RemoteFile(self._url(file), file["size"])
            with zipfile.ZipFile(remote) as zf:
                infos = [i for i in zf.infolist() if i.filename.endswith(SOURCE_SUFFIXES) and i.file_size <= MAX_FILE_BYTES]
                root = "" if is_wheel else _common_root([i.filename for i in infos])
                named = [(self._dist(i.filename[len(root):], is_wheel), i) for i in infos]
                out = [(path, zf.read(i)) for path, i in named if cfg.in_scope(path)]
            self.fetched_bytes += remote.fetched
            return out
        kept = self.cache / "dl" / name  # an sdist is read whole: keep it for a wide read
        if not kept.exists():
            kept.parent.mkdir(parents=True, exist_ok=True)
            kept.write_bytes(_get(self._url(file)))
            self.fetched_bytes += kept.stat().st_size
        data = kept.read_bytes()
        with tarfile.open(fileobj=io.BytesIO(data)) as tf:
            members = [m for m in tf.getmembers() if m.isfile() and m.name.endswith(SOURCE_SUFFIXES) and m.size <= MAX_FILE_BYTES]
            root = _common_root([m.name for m in members])
            out = []
            for m in members:
                path = self._dist(m.name[len(root):], False)
                handle = tf.extractfile(m)
                data = handle.read() if handle is not None else b""
                # Out of scope, a C++ file still counts for the raising macros it defines.
                if cfg.in_scope(path) or (not path.endswith(".py") and b"#define" in data):
                    out.append((path, data))
            return out

    def _url(self, file: dict) -> str:
        return urllib.parse.urljoin(f"https://pypi.org/pypi/{self.project}/json", file["url"])  # a mirror may list relative URLs

    def _dist(self, path: str, is_wheel: bool) -> str:
        return path if is_wheel else self.cfg.dist_path(path)


def _common_root(names: list[str]) -> str:
    tops = {n.split("/", 1)[0] for n in names if "/" in n}
    return tops.pop() + "/" if len(tops) == 1 else ""


def shape(template: str) -> str:
    """A template with its placeholders unnamed: renaming a variable does not change the message."""
    return PLACEHOLDER.sub(lambda m: m.group(0) if m.group(0) in ("{{", "}}") else "{}", template)


PLACEHOLDER = re.compile(r"\{\{|\}\}|\{[^{}]*\}")


@dataclasses.dataclass
class Probe:
    files: set[str]  # in-scope files, repository paths
    sites: set[tuple[str, str]]  # (path, template)


@dataclasses.dataclass
class Target:
    """What one record's message looks like in one package."""

    shapes: set[str] = dataclasses.field(default_factory=set)  # its templates, placeholders unnamed
    elsewhere: set[tuple[str, str]] = dataclasses.field(default_factory=set)  # (path, shape) of sites it does not link
    python: bool = False  # whether a linked site is Python (else C++ only)

    def raising_paths(self, probe: Probe | None) -> list[str] | None:
        """Files of the release that raise it; None when the release cannot tell: unreadable, or
        holding no in-scope file of the message's language (its code lived elsewhere, or a
        wheel did not ship those sources)."""
        if probe is None or not any(f.endswith(".py") == self.python for f in probe.files):
            return None
        return sorted({p for p, t in probe.sites if shape(t) in self.shapes and (p, shape(t)) not in self.elsewhere})

    def keywords(self) -> list[str]:
        """The two longest words of its templates: a file that raises it contains one of them."""
        words = {w for s in self.shapes for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]{3,}", s)}
        return sorted(words, key=len, reverse=True)[:2]

    def raises(self, probe: Probe | None) -> Check:
        paths = self.raising_paths(probe)
        return None if paths is None else bool(paths)


def targets(dataset: Dataset, record) -> dict[str, Target]:
    """Per package: the record's message there (sites with the same words that the record does
    not link, in files it does not link, are another reason's and are left out)."""
    linked = [dataset.sites[s] for s in record.sites if s in dataset.sites]
    out: dict[str, Target] = {}
    for site in linked:
        target = out.setdefault(site.package, Target())
        target.shapes.add(shape(site.template))
        target.python |= site.language == "python"
    linked_paths = {(s.path, shape(s.template)) for s in linked}
    for site in dataset.sites.values():
        key = (site.path, shape(site.template))
        if site.package in out and key[1] in out[site.package].shapes and key not in linked_paths:
            out[site.package].elsewhere.add(key)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--packages", nargs="*", help="only these packages (default: all with records)")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/vb-dl"))
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--date", default=dt.date.today().isoformat())
    args = parser.parse_args()
    dataset = Dataset.load(args.data)
    data_dir = dataset.data_dir
    table = boundaries.read(data_dir)
    per_package: dict[str, list] = defaultdict(list)
    for record in dataset.records:
        for package, target in targets(dataset, record).items():
            per_package[package].append((record.id, target))
    order = sorted(per_package, key=lambda p: -len(per_package[p]))
    for package in args.packages or order:
        if package in NOT_RELEASES:
            table["not_checked"][package] = NOT_RELEASES[package]
            continue
        releases = Releases(dataset.packages[package], args.cache)
        harvested = dataset.harvested_versions(package)
        every = sorted(set(releases.versions) | set(harvested), key=version_key)
        counts = defaultdict(int)
        for record_id, target in per_package[package]:
            site_versions = {o.version for s in dataset.sites.values() if s.package == package
                             and (s.path, shape(s.template)) not in target.elsewhere
                             and shape(s.template) in target.shapes for o in s.occurrences}
            known = {v: v in site_versions for v in harvested}
            if not any(known.values()):
                continue
            result = search(every, known, lambda v: target.raises(releases.sites(v)))
            # A neighbour that lacks the message in scope may still raise it from a file that moved
            # out of scope: then that end is only bounded, and the file is named.
            outside = {}
            for end, neighbour in (("first", result.before_first), ("last", result.after_last)):
                if getattr(result, end + "_status") == "found":
                    paths = releases.outside_scope(neighbour, target)
                    if paths is None or paths:
                        outside[neighbour] = paths
                        setattr(result, end + "_status", "bounded")
            table["records"].setdefault(record_id, {})[package] = {
                "first": result.first, "first_status": result.first_status, "before_first": result.before_first,
                "last": result.last, "last_status": result.last_status, "after_last": result.after_last,
                "gaps": result.gaps, "checked": result.checked, "outside_scope": outside}
            counts[result.first_status] += 1
            print(f"{package:18} {record_id:55} {result.first:>12} ({result.first_status}) .. "
                  f"{result.last} ({result.last_status}){'  gaps ' + ','.join(result.gaps) if result.gaps else ''}")
        table["packages"][package] = {
            "registry": f"https://pypi.org/project/{releases.project}/", "source": releases.source(),
            "releases": len(releases.versions), "oldest": releases.versions[0], "newest": releases.versions[-1],
            "checked_on": args.date}
        print(f"== {package}: {dict(counts)}; {releases.read} releases read, "
              f"{releases.fetched_bytes / 1e6:.1f} MB fetched", file=sys.stderr)
        boundaries.write(data_dir, table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
