"""The rule table (code, name, records, prefilter tokens) without importing the rules.

Importing the rule modules means importing libcst, which costs more than linting a typical
pre-commit batch whose files all fail the prefilter. The table is built once from the rule
classes and kept as JSON in the cache folder under the linter's fingerprint (a hash of its own
source), so a start-up reads one small file; with no cache folder it is built in-process.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from errkb import layout


@dataclass(frozen=True)
class RuleRow:
    code: str
    name: str
    records: tuple[str, ...]
    prefilter: tuple[tuple[bytes, ...], ...]


@lru_cache(maxsize=1)
def linter_fingerprint() -> str:
    """A hash of the linter's own source and of the data its rules read besides the records
    (the configuration rules' choice tables, data/lint/choices.json): any change to a rule, the
    analysis, the engine or the accepted names gives new cache keys and a new rule table."""
    h = hashlib.sha256()
    here = Path(__file__).parent
    for name in sorted(os.listdir(here)):
        if name.endswith(".py"):
            h.update(name.encode() + b"\0" + (here / name).read_bytes())
    try:
        h.update(b"choices\0" + layout.lint_choices_path(layout.default_data_dir()).read_bytes())
    except OSError:
        h.update(b"choices\0missing")
    return h.hexdigest()


def _from_rules() -> dict[str, RuleRow]:
    from errkb.lint.rule import all_rules  # libcst: only when the table is not cached

    return {code: RuleRow(code, cls.NAME, tuple(cls.RECORDS), tuple(tuple(g) for g in cls.PREFILTER))
            for code, cls in all_rules().items()}


def _encode(rows: dict[str, RuleRow]) -> str:
    return json.dumps([[r.code, r.name, list(r.records), [[t.decode("latin-1") for t in g] for g in r.prefilter]]
                       for r in rows.values()])


def _decode(text: str) -> dict[str, RuleRow]:
    return {code: RuleRow(code, name, tuple(records), tuple(tuple(t.encode("latin-1") for t in g) for g in groups))
            for code, name, records, groups in json.loads(text)}


def rule_table(cache_dir: Path | None) -> dict[str, RuleRow]:
    """Every rule's row, by code (sorted), from the cache folder when it has this linter's table."""
    if cache_dir is None:
        return _from_rules()
    path = Path(cache_dir, f"rules-{linter_fingerprint()[:20]}.json")
    try:
        return _decode(path.read_text())
    except (OSError, ValueError, TypeError):
        pass
    rows = _from_rules()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(_encode(rows))
        os.replace(tmp, path)
    except OSError:
        pass
    return rows


class RecordTexts:
    """The upstream wording of the records the rules link to, read only when a file needs it;
    its digest (for cache keys) hashes the record files without parsing them."""

    def __init__(self, data_dir: Path, wanted) -> None:
        self.data_dir = Path(data_dir)
        self.wanted = frozenset(wanted)
        self._texts = None

    def _paths(self) -> list[Path]:
        return [p for p in layout.record_paths(self.data_dir) if p.stem in self.wanted]

    def digest(self) -> str:
        h = hashlib.sha256()
        for p in self._paths():
            h.update(p.stem.encode() + b"\0" + p.read_bytes() + b"\0")
        return h.hexdigest()

    def load(self) -> dict:
        if self._texts is None:
            from errkb.lint.results import RecordText

            self._texts = {}
            for p in self._paths():
                rec = json.loads(p.read_text())
                confirmed = (rec.get("verification") or {}).get("status") == "confirmed"
                self._texts[rec["id"]] = RecordText(rec["error_class"], rec["message"], rec["template"], confirmed)
        return self._texts
