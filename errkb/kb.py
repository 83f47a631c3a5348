"""The knowledge base as the API, the web page and the CLI use it: one object, loaded once."""

from __future__ import annotations

import hashlib
import json
from functools import cached_property
from pathlib import Path

from errkb import layout
from errkb.dataset import Dataset
from errkb.match import MatchIndex
from errkb.match_json import MatchJsonWriter
from errkb.projects import ProjectNames
from errkb.model import RecordDetail, Site


class KnowledgeBase:
    def __init__(self, dataset: Dataset) -> None:
        self.dataset = dataset
        self.index = MatchIndex(dataset)
        self.details = {r.id: dataset.detail(r) for r in dataset.records}
        self._record_json: dict[str, bytes] = {}
        self._site_json: dict[str, bytes] = {}
        names = ProjectNames.load(dataset.data_dir, self.index.evidence_packages)
        self._match_writer = MatchJsonWriter(self.index, self.record_json, self.site_json, names)

    @classmethod
    def load(cls, data_dir: Path | None = None) -> "KnowledgeBase":
        return cls(Dataset.load(data_dir))

    @cached_property
    def version(self) -> str:
        """Changes whenever any shipped data file changes."""
        digest = hashlib.sha256()
        data_dir = self.dataset.data_dir
        for path in sorted([*layout.record_paths(data_dir), *layout.site_paths(data_dir)]):
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
        dates = [v.get("harvested_on", "") for pkg in self.dataset.manifest.values() for v in pkg.values()]
        return f"{max(dates, default='unharvested')}+{digest.hexdigest()[:12]}"

    @cached_property
    def template_count(self) -> int:
        return len({(s.package, s.template) for s in self.dataset.sites.values()})

    def record_json(self, record_id: str) -> bytes:
        """A record's detail serialised once: matches reuse it instead of re-serialising."""
        if (cached := self._record_json.get(record_id)) is None:
            cached = self._record_json[record_id] = self.details[record_id].model_dump_json().encode()
        return cached

    def site_json(self, site_id: str) -> bytes:
        if (cached := self._site_json.get(site_id)) is None:
            cached = self._site_json[site_id] = self.dataset.sites[site_id].model_dump_json().encode()
        return cached

    def match_json(self, text: str, limit: int = 5, project: str = "") -> bytes:
        """/v1/match's body for a paste (see `errkb.match_json`)."""
        return self._match_writer.write(text, limit, project)

    def etag(self, record_id: str) -> str:
        body = json.dumps(self.details[record_id].model_dump(mode="json"), sort_keys=True)
        return '"' + hashlib.sha256(body.encode()).hexdigest()[:20] + '"'

    # ------------------------------------------------------------ lookups

    def find_records(self, q: str | None = None, backend: str | None = None, package: str | None = None,
                     version: str | None = None, error_class: str | None = None,
                     tag: str | None = None) -> list[RecordDetail]:
        words = (q or "").lower().split()
        out = []
        for detail in self.details.values():
            haystack = " ".join([detail.id, detail.title, detail.message, detail.meaning, " ".join(detail.tags)]).lower()
            if words and not all(w in haystack for w in words):
                continue
            if backend and backend not in detail.backends:
                continue
            if package and package not in detail.packages:
                continue
            if version and not any(version in a.versions for a in detail.affected
                                   if package is None or a.package == package):
                continue
            if error_class and detail.error_class != error_class:
                continue
            if tag and tag not in detail.tags:
                continue
            out.append(detail)
        return sorted(out, key=lambda d: d.id)

    def find_sites(self, q: str | None = None, package: str | None = None, version: str | None = None,
                   kind: str | None = None, error_class: str | None = None) -> list[Site]:
        needle = (q or "").lower()
        out = []
        for site in self.dataset.sites.values():
            if needle and needle not in site.template.lower():
                continue
            if package and site.package != package:
                continue
            if version and version not in site.versions:
                continue
            if kind and site.kind != kind:
                continue
            if error_class and site.error_class != error_class:
                continue
            out.append(site)
        return sorted(out, key=lambda s: (s.package, s.path, s.template))

    def backends(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for record in self.dataset.records:
            for backend in record.backends:
                counts[backend] = counts.get(backend, 0) + 1
        return dict(sorted(counts.items()))

