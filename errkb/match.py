"""Match pasted errors to records and sites.

The index is built once: every distinct template becomes one entry, found through an
inverted index of its literal words (weighted by rarity), then confirmed by its search
pattern (exact, with parameter values) or, failing that, by fuzzy similarity of its literal
text to a line of the paste (wording that drifted between versions).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property

from rapidfuzz import fuzz

from errkb import templates
from errkb.dataset import Dataset
from errkb.model import Site
from errkb.paste import Paste, parse

MIN_SCORE = 0.75  # below this a candidate is noise, and "no match" is the honest answer
MAX_CANDIDATES = 64
FUZZY_MIN_RATIO = 88.0
FUZZY_CANDIDATES = 12
FUZZY_MIN_COVERAGE = 0.7  # a reworded message still shares most of its words
RECORD_BONUS = 0.02
EVIDENCE_BONUS = 0.05
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_STOP = frozenset("the and for not with are this that was you your use got but has have from into".split())


def words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)} - _STOP


def literal_words(template: str) -> set[str]:
    """Words every instance of the template surely contains as whole words: a word that
    touches a placeholder (`{name}_proj`) may be glued to the value, so it is left out."""
    out: set[str] = set()
    parts = templates.parse(template)
    for i, (literal, _field) in enumerate(parts):
        after_value = i > 0  # parse() puts a placeholder between consecutive parts
        before_value = parts[i][1] is not None
        for m in _WORD.finditer(literal):
            if (after_value and m.start() == 0) or (before_value and m.end() == len(literal)):
                continue
            out.add(m.group().lower())
    return out - _STOP


@dataclass
class Entry:
    """One distinct template and every site (package, file, version) that emits it."""

    template: str
    literal: str
    words: set[str]
    sites: list[Site]
    record_ids: list[str]
    _finder: templates.Finder | None = None

    @cached_property
    def pieces(self) -> tuple[str, ...]:
        """Its literal text between blanks and placeholders, in order: every match holds each
        piece exactly, one after the other, so a text missing that sequence needs no regex."""
        return tuple(chunk for literal, _ in templates.parse(self.template) for chunk in literal.split())

    @property
    def finder(self) -> templates.Finder:
        if self._finder is None:
            self._finder = templates.Finder(self.template)
        return self._finder

    @property
    def pattern(self) -> re.Pattern[str]:
        return self.finder.pattern

    @property
    def packages(self) -> set[str]:
        return set(self.versions_by_package)

    @cached_property
    def versions_by_package(self) -> dict[str, list[str]]:
        """Versions that emit the template, per package (packages by name, sites by path)."""
        out: dict[str, list[str]] = {}
        for site in sorted(self.sites, key=lambda s: (s.package, s.path)):
            seen = out.setdefault(site.package, [])
            seen += [v for v in site.versions if v not in seen]
        return out

    @cached_property
    def first_site(self) -> dict[str, Site]:
        """Each package's first site by path: the one a bare-site match names."""
        out: dict[str, Site] = {}
        for site in sorted(self.sites, key=lambda s: (s.package, s.path)):
            out.setdefault(site.package, site)
        return out


def _in_order(pieces: tuple[str, ...], text: str) -> bool:
    """Whether text holds every piece, each after the end of the one before (leftmost placement
    is enough: if any placement exists, the leftmost one does)."""
    pos = 0
    for piece in pieces:
        pos = text.find(piece, pos)
        if pos < 0:
            return False
        pos += len(piece)
    return True


@dataclass
class Match:
    id: str
    kind: str  # "record" or "site"
    score: float
    span: tuple[int, int]  # offsets into the pasted text
    matched_text: str
    params: dict[str, str]
    template: str
    packages: list[str]
    versions: dict[str, list[str]]
    why: list[str] = field(default_factory=list)
    specificity: int = 0  # literal characters the template pins down; breaks score ties


class MatchIndex:
    def __init__(self, dataset: Dataset) -> None:
        self.dataset = dataset
        linked: dict[str, list[str]] = defaultdict(list)
        for record in dataset.records:
            for sid in record.sites:
                linked[sid].append(record.id)
        by_template: dict[str, list[Site]] = defaultdict(list)
        for site in dataset.sites.values():
            by_template[site.template].append(site)
        # A record's own canonical template is searchable too, so records match even when
        # their wording is newer or older than every harvested site.
        self.entries: list[Entry] = []
        for template, sites in by_template.items():
            record_ids = sorted({rid for s in sites for rid in linked.get(s.id, [])})
            self.entries.append(self._entry(template, sites, record_ids))
        for record in dataset.records:
            if record.template not in by_template:
                sites = [dataset.sites[s] for s in record.sites if s in dataset.sites]
                self.entries.append(self._entry(record.template, sites, [record.id]))
        self.postings: dict[str, list[int]] = defaultdict(list)
        for i, entry in enumerate(self.entries):
            for w in entry.words:
                self.postings[w].append(i)
        n = len(self.entries)
        self.idf = {w: math.log(1 + n / len(ids)) for w, ids in self.postings.items()}
        self.entry_weight = [sum(self.idf[w] for w in e.words) or 1.0 for e in self.entries]
        self.rare_limit = max(20, n // 400)
        # Every entry is also reachable through its rarest word, so one made only of
        # common words ("dq must have the same dtype as q") is still opened when present.
        self.anchors: dict[str, list[int]] = defaultdict(list)
        for i, entry in enumerate(self.entries):
            if entry.words:
                self.anchors[min(entry.words, key=lambda w: (len(self.postings[w]), w))].append(i)

    @staticmethod
    def _entry(template: str, sites: list[Site], record_ids: list[str]) -> Entry:
        literal = re.sub(r"\s+", " ", templates.literal_text(template)).strip()
        return Entry(template, literal, literal_words(template), sites, record_ids)

    # ------------------------------------------------------------ matching

    def covered(self, found: set[str]) -> list[int]:
        """Entries whose every literal word is in the paste, most specific first.

        Only these can match exactly, and each is reachable through its rarest word (its
        anchor), so the words of the paste open them directly: a few dictionary lookups and
        set comparisons, with no weights to add up.
        """
        hits = [i for w in found for i in self.anchors.get(w, ()) if self.entries[i].words <= found]
        hits.sort(key=lambda i: (-self.entry_weight[i], i))
        return hits[:MAX_CANDIDATES]

    def candidates(self, found: set[str]) -> list[tuple[int, float]]:
        """Entries whose literal words the paste mostly contains, best covered first (the
        fuzzy path: wording that drifted shares most words, not all).

        The paste's rarer words open candidates and add their weight through the posting
        lists; a word in most templates says little, so its weight is added only to entries
        already opened (a set intersection) instead of walking its long posting list.
        """
        common = {w for w in found if len(self.postings.get(w, ())) > self.rare_limit}
        gained: dict[int, float] = defaultdict(float)
        for w in found - common:
            weight = self.idf.get(w)
            if weight is not None:
                for i in self.postings[w]:
                    gained[i] += weight
        for w in common:
            for i in self.anchors.get(w, ()):
                gained.setdefault(i, 0.0)
        common_total = sum(self.idf[w] for w in common)
        scored = []
        for i, g in gained.items():
            weight = self.entry_weight[i]
            if (g + common_total) < 0.5 * weight:
                continue  # cannot reach half coverage even with every common word
            entry_words = self.entries[i].words
            if entry_words <= found:  # every word present: no need to add them up
                scored.append((i, 1.0, weight))
                continue
            if common:
                g += sum(self.idf[w] for w in entry_words & common)
            if g >= 0.5 * weight:
                scored.append((i, g / weight, g))
        # Fully covered and specific (much matched weight) first.
        scored.sort(key=lambda x: (-x[1], -x[2], x[0]))
        return [(i, coverage) for i, coverage, _ in scored[:MAX_CANDIDATES]]

    def match(self, text: str, limit: int = 5, exhaustive: bool = False) -> list[Match]:
        """Ranked matches for a paste. `exhaustive` runs every template's pattern in turn, with
        no candidate selection or prefilter (the naive baseline of the benchmark; same scoring)."""
        paste = parse(text)
        found = words(paste.message_text)
        hits = []
        # An instance holds every literal word, so only fully covered entries can match exactly.
        exact_candidates = range(len(self.entries)) if exhaustive else self.covered(found)
        for i in exact_candidates:
            if found_exact := self._exact(self.entries[i], paste, prefilter=not exhaustive):
                hits.append((self.entries[i], *found_exact))
        # Fuzzy matching is the slow path: only when nothing specific matched exactly.
        if not any(score >= 0.9 for _, score, *_ in hits):
            exact = {id(entry) for entry, *_ in hits}
            lines = paste.lines()[-200:]
            fuzzy_candidates = [i for i, coverage in self.candidates(found) if coverage >= FUZZY_MIN_COVERAGE]
            for i in fuzzy_candidates[:FUZZY_CANDIDATES]:
                entry = self.entries[i]
                if id(entry) not in exact and (found_fuzzy := self._fuzzy(entry, lines)):
                    hits.append((entry, *found_fuzzy))
        for entry, score, span, params, why in hits:
            if entry.packages & paste.packages:
                why.append("traceback frames point to " + ", ".join(sorted(entry.packages & paste.packages)))
        hits = [(score + (EVIDENCE_BONUS if entry.packages & paste.packages else 0.0), entry, span, params, why)
                for entry, score, span, params, why in hits]
        return self._rank(hits, paste, limit)

    @staticmethod
    def _informative(entry: Entry) -> float:
        return min(1.0, len(entry.literal) / 40)

    def _exact(self, entry: Entry, paste: Paste, prefilter: bool = True):
        if len(entry.literal) < 8 or (prefilter and not _in_order(entry.pieces, paste.text)):
            return None
        m = entry.finder.search(paste.text) if prefilter else entry.pattern.search(paste.text)
        if not m:
            return None
        params = {k: v for k, v in m.groupdict().items() if v is not None}
        why = [f"exact match of the message template ({len(entry.pattern.groupindex)} parameters)"]
        return 0.7 + 0.3 * self._informative(entry), m.span(), params, why

    def _fuzzy(self, entry: Entry, lines: list[tuple[int, str]]):
        if len(entry.literal) < 20:
            return None  # too little text to trust a fuzzy match
        best, best_line = 0.0, None
        for offset, line in lines:
            # partial_ratio forgives text around the message; token_set_ratio forgives
            # reordered, inserted or renamed words (a message reworded between versions).
            ratio = max(fuzz.partial_ratio(entry.literal, line, score_cutoff=FUZZY_MIN_RATIO),
                        fuzz.token_set_ratio(entry.literal, line, score_cutoff=FUZZY_MIN_RATIO))
            if ratio > best:
                best, best_line = ratio, (offset, line)
        if best_line is None:
            return None
        score = 0.9 * best / 100 * (0.8 + 0.2 * self._informative(entry))
        offset, line = best_line
        return score, (offset, offset + len(line)), {}, [f"fuzzy match: {best:.0f}% of the message text (wording differs)"]

    def _rank(self, hits, paste: Paste, limit: int) -> list[Match]:
        best: dict[str, Match] = {}
        for score, entry, span, params, why in hits:
            # Packages the traceback points to come first.
            order = sorted(entry.versions_by_package, key=lambda pkg: pkg not in paste.packages)
            versions = {pkg: list(entry.versions_by_package[pkg]) for pkg in order}  # copies: callers may edit
            orig = paste.span(*span)
            common = dict(span=orig, matched_text=paste.original[orig[0]:orig[1]], params=params,
                          template=entry.template, packages=sorted(versions), versions=versions,
                          specificity=len(entry.literal))
            if entry.record_ids:
                for rid in entry.record_ids:
                    m = Match(id=rid, kind="record", score=min(1.0, score + RECORD_BONUS), why=why, **common)
                    if rid not in best or (best[rid].score, best[rid].specificity) < (m.score, m.specificity):
                        best[rid] = m
            elif order:
                m = Match(id=entry.first_site[order[0]].id, kind="site", score=min(1.0, score), why=why, **common)
                if m.id not in best or (best[m.id].score, best[m.id].specificity) < (m.score, m.specificity):
                    best[m.id] = m
        ranked = sorted((m for m in best.values() if m.score >= MIN_SCORE),
                        key=lambda m: (-round(m.score, 3), -m.specificity, m.kind != "record", m.id))
        return ranked[:limit]
