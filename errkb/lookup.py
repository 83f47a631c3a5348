"""Lookups for the command line, from the on-disk index cache (errkb.index_cache).

`errkb explain` and `errkb show` answer from cached JSON: no pydantic models and no parsing of
the sites file on a warm run. The API keeps the full `KnowledgeBase` (loaded once per process).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from errkb import index_cache
from errkb.match import Match
from errkb.match_json import MatchJsonWriter
from errkb.paste import parse
from errkb.projects import ProjectNames


@dataclass
class Explained:
    """A match with its record's detail or its site, as JSON objects (see model.RecordDetail)."""

    match: Match
    record: dict | None
    site: dict | None


class Lookup:
    def __init__(self, parts: index_cache.CachedParts, data_dir: Path) -> None:
        self.index = parts.index
        self._records, self._sites = parts.records, parts.sites
        self.names = ProjectNames.load(data_dir, self.index.evidence_packages)
        self._writer = MatchJsonWriter(self.index, self._records.__getitem__, self._sites.__getitem__, self.names)

    @classmethod
    def load(cls, data_dir: Path) -> "Lookup":
        return cls(index_cache.load(data_dir), data_dir)

    def match_json(self, text: str, limit: int = 5, project: str = "") -> bytes:
        """Exactly what POST /v1/match answers."""
        return self._writer.write(text, limit, project)

    def explain(self, text: str, limit: int = 5, project: str = "") -> list[Explained]:
        return [Explained(m, self.record(m.id) if m.kind == "record" else None,
                          json.loads(self._sites[m.id]) if m.kind == "site" else None)
                for m in self.index.match(text, limit, project=self.names.packages(project))]

    def withheld(self, text: str, project: str = "") -> list[tuple[dict, list[str]]]:
        """For a paste nothing matched: the records it would need to name a library for (their
        detail, and the texts that would do), see MatchIndex.withheld."""
        paste = parse(text)
        paste.project = self.names.packages(project)
        return [(self.record(record_id), [ref.contains for ref in refs])
                for record_id, refs in self.index.withheld(paste)]

    def record(self, record_id: str) -> dict | None:
        raw = self._records.get(record_id)
        return None if raw is None else json.loads(raw)
