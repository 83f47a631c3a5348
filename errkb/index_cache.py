"""The match index and the records' JSON, kept on disk between runs of the CLI.

Building the index means parsing 13,000 sites with pydantic and planning the candidate
selections: a second or more, every `errkb explain`. The result is plain data (strings,
numbers, lists), so it is written once with `marshal` and read back in milliseconds. The file
is keyed by every data file's name, size and modification time, by errkb's own code files (a
new matcher changes the plan) and by the Python version (marshal's format is per version);
any change makes a new key and the next run rebuilds. A cache that cannot be read or written
is ignored: the answer is the same, only slower.
"""

from __future__ import annotations

import gc
import hashlib
import marshal
import os
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from errkb import candidates, layout
from errkb.match import Entry, EvidenceRef, MatchIndex, SiteRef, collector_paused, exact_plan, weighted_plan

FORMAT = 3
_NONE: frozenset[str] = frozenset()
_CODE_DIR = Path(__file__).resolve().parent


@dataclass
class CachedParts:
    """Everything the CLI's lookups need, as loaded from the cache or just built."""

    index: MatchIndex
    records: dict[str, bytes]  # record id -> its detail (`model.RecordDetail`) as JSON
    sites: Mapping[str, bytes]  # site id -> the site as JSON (read from disk on first use)


def cache_dir() -> Path:
    if explicit := os.environ.get("ERRKB_CACHE_DIR"):
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "errkb"


def cache_key(data_dir: Path) -> str:
    digest = hashlib.sha256(f"{FORMAT} {sys.version} {Path(data_dir).resolve()}".encode())
    code = sorted(p for p in _CODE_DIR.iterdir() if p.suffix in (".py", ".so"))
    for path in [*code, *layout.all_data_files(data_dir)]:
        st = path.stat()
        digest.update(f"\0{path}\0{st.st_size}\0{st.st_mtime_ns}".encode())
    return digest.hexdigest()[:24]


def load(data_dir: Path) -> CachedParts:
    """The cached parts for this data folder, building and saving them when missing or stale."""
    if candidates.compiled is None:  # the plain-Python selections take plans, not cached arguments
        return _in_memory(data_dir)
    folder = hashlib.sha256(str(Path(data_dir).resolve()).encode()).hexdigest()[:12]
    path = cache_dir() / f"index-{folder}-{cache_key(data_dir)}.marshal"
    sites_path = path.with_name("sites" + path.name[len("index"):])
    try:
        with collector_paused():  # a million new objects, no cycles: see match.collector_paused
            parts = _assemble(marshal.loads(path.read_bytes()), _SitesOnDisk(sites_path, data_dir))
            gc.freeze()  # they live as long as the process: no collection needs to scan them
        return parts
    except (OSError, EOFError, ValueError, TypeError, KeyError):
        pass
    parts, payload = build(data_dir)
    _save(sites_path, parts.sites)  # first: a reader who finds the index finds its sites
    _save(path, payload)
    return parts


def build(data_dir: Path) -> tuple[CachedParts, dict]:
    """The slow path: load the dataset, build the index, and serialise what lookups need."""
    from errkb.kb import KnowledgeBase  # pydantic and the whole dataset: only when building

    kb = KnowledgeBase.load(data_dir)
    index = kb.index
    records = {rid: kb.record_json(rid) for rid in kb.details}
    sites = {sid: kb.site_json(sid) for sid in kb.dataset.sites}
    payload = {"format": FORMAT, "records": records, "heads": index.heads,
               "evidence_of": {rid: [tuple(e) for e in refs] for rid, refs in index.evidence_of.items()},
               "file_evidence_of": {rid: [tuple(e) for e in refs] for rid, refs in index.file_evidence_of.items()},
               "wrappers": sorted(index.wrappers),
               "entries": [(e.template, e.literal, [tuple(s) for s in e.sites], e.record_ids) for e in index.entries]}
    if candidates.compiled is not None:
        payload["exact_args"] = candidates.exact_args(exact_plan(index.entries))
        payload["weighted_args"] = candidates.weighted_args(weighted_plan(index.entries))
    return CachedParts(index, records, sites), payload


def _in_memory(data_dir: Path) -> CachedParts:
    """Without the compiled selections nothing is cached: the index is built as the API builds
    it, and a site's JSON is written only when a match names it."""
    from errkb.kb import KnowledgeBase

    kb = KnowledgeBase.load(data_dir)
    return CachedParts(kb.index, {rid: kb.record_json(rid) for rid in kb.details}, _SitesOf(kb))


class _SitesOf(Mapping):
    """A knowledge base's sites as JSON, each serialised on first use."""

    def __init__(self, kb) -> None:
        self._kb = kb

    def __getitem__(self, site_id: str) -> bytes:
        return self._kb.site_json(site_id)

    def __iter__(self):
        return iter(self._kb.dataset.sites)

    def __len__(self) -> int:
        return len(self._kb.dataset.sites)


class _CachedEntries(Sequence):
    """The index's entries, each made on first use: a paste touches a few dozen of 10,000.
    An entry is made once, so it is the same object every time (the matcher relies on that)."""

    def __init__(self, rows: list[tuple]) -> None:
        self._rows = rows
        self._made: list[Entry | None] = [None] * len(rows)

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        if (entry := self._made[i]) is None:
            template, literal, sites, record_ids = self._rows[i]
            # Words and tokens only plan the candidate selections, which come ready-made.
            entry = self._made[i] = Entry(template, literal, _NONE, _NONE, [SiteRef(*s) for s in sites], record_ids)
        return entry


class _SitesOnDisk(Mapping):
    """The sites' JSON, read from its own cache file when a match first needs a bare site
    (most answers are records): 13,000 sites are a third of what a lookup would load."""

    def __init__(self, path: Path, data_dir: Path) -> None:
        self._path, self._data_dir = path, data_dir

    @cached_property
    def _sites(self) -> dict[str, bytes]:
        try:
            sites = marshal.loads(self._path.read_bytes())
            if isinstance(sites, dict):
                return sites
        except (OSError, EOFError, ValueError, TypeError):
            pass
        self._path.with_name("index" + self._path.name[len("sites"):]).unlink(missing_ok=True)  # rebuild both next time
        return dict(build(self._data_dir)[0].sites)

    def __getitem__(self, site_id: str) -> bytes:
        return self._sites[site_id]

    def __iter__(self):
        return iter(self._sites)

    def __len__(self) -> int:
        return len(self._sites)


def _assemble(payload: dict, sites: Mapping[str, bytes]) -> CachedParts:
    if payload.get("format") != FORMAT:
        raise ValueError("another cache format")
    entries = _CachedEntries(payload["entries"])
    evidence_of = {rid: tuple(EvidenceRef(*e) for e in refs) for rid, refs in payload["evidence_of"].items()}
    file_evidence_of = {rid: tuple(EvidenceRef(*e) for e in refs) for rid, refs in payload["file_evidence_of"].items()}
    index = MatchIndex.assemble(
        entries, evidence_of, frozenset(payload["wrappers"]), [tuple(h) for h in payload["heads"]],
        candidates.compiled.ExactCandidates(*payload["exact_args"]),
        candidates.compiled.WeightedCandidates(*payload["weighted_args"]), file_evidence_of)
    return CachedParts(index, payload["records"], sites)


def _save(path: Path, payload: dict) -> None:
    """Written to a temporary file and renamed, so a reader never sees half a cache; older
    caches of the same kind and data folder are removed (the newest is the only one read)."""
    kind, folder = path.name.split("-")[:2]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        for old in path.parent.glob(f"{kind}-{folder}-*.marshal"):
            old.unlink(missing_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".index-")
        with os.fdopen(fd, "wb") as out:
            marshal.dump(payload, out)
        os.replace(tmp, path)
    except OSError:
        pass
