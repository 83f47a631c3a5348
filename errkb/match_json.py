"""The one writer of a match as JSON: /v1/match's body (`api.models.MatchResponse`), which the
API and `errkb explain --format json` both answer with."""

from __future__ import annotations

import json
from typing import Callable

import orjson

from errkb.match import Entry, MatchIndex
from errkb.projects import ProjectNames


class MatchJsonWriter:
    """What depends on the paste (id, score, span, text, params, why) is written per request;
    what depends only on the entry, the order of its packages and the record or site is
    written once and reused: that is most of the bytes and, before, most of the time."""

    def __init__(self, index: MatchIndex, record_json: Callable[[str], bytes],
                 site_json: Callable[[str], bytes], names: ProjectNames) -> None:
        self.index = index
        self.names = names  # what a request's `project` names (errkb.projects)
        self.record_json = record_json  # a record's detail as JSON bytes, by id
        self.site_json = site_json  # a site as JSON bytes, by id
        self._closing_cache: dict[tuple, bytes] = {}

    def write(self, text: str, limit: int = 5, project: str = "") -> bytes:
        packages = self.names.packages(project) if project else frozenset()
        paste, ranked = self.index.ranked(text, limit, project=packages)
        pointed, original = paste.packages, paste.original
        parts = [b'{"matches":[']  # joined once at the end: the records' JSON is copied only once
        for match_id, kind, score, (entry, _, span, params, why) in ranked:
            start, end = paste.span(*span)
            head = _dumps({"id": match_id, "kind": kind, "score": round(score, 4), "span": [start, end],
                           "matched_text": original[start:end], "params": params, "why": why})
            if len(parts) > 1:
                parts.append(b",")
            parts += (head[:-1], self._closing(match_id, kind, entry, entry.seen_from(pointed).order))
        parts.append(b"]")
        if not ranked:  # what the paste would need to name (see MatchIndex.withheld)
            withheld = [{"id": record_id, "needs": [ref._asdict() for ref in refs]}
                        for record_id, refs in self.index.withheld(paste)]
            parts += (b',"withheld":', orjson.dumps(withheld))
        if project:  # how the project was read: an unknown one names no package, and says so
            parts += (b',"project":', _dumps({"text": project, "packages": sorted(packages)}))
        parts.append(b"}")
        return b"".join(parts)

    def _closing(self, match_id: str, kind: str, entry: Entry, order: tuple[str, ...]) -> bytes:
        """A match's members after `why`: the entry's template, packages and versions (packages
        in `order`), then its record or its site; written once per combination."""
        key = (match_id, kind, entry.template, order)
        if (cached := self._closing_cache.get(key)) is None:
            by_package = entry.versions_by_package
            members = orjson.dumps({"template": entry.template, "packages": entry.sorted_packages,
                                    "versions": {pkg: by_package[pkg] for pkg in order}})[1:-1]
            record = self.record_json(match_id) if kind == "record" else b"null"
            site = self.site_json(match_id) if kind == "site" else b"null"
            cached = self._closing_cache[key] = b',%s,"record":%s,"site":%s}' % (members, record, site)
        return cached


def _dumps(value: dict) -> bytes:
    """orjson, or the standard library for the text orjson refuses (lone surrogates in a paste)."""
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:
        return json.dumps(value).encode()
