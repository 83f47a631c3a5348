"""Candidate selection: which index entries a paste can match, before any pattern runs.

Two selections, each in two implementations that must give the same answers:

* exact candidates: entries whose every literal token is in the paste's message text and
  whose literal pieces appear in the cleaned text in order (only these can match exactly);
* weighted candidates: entries whose literal words the message text mostly contains, by
  rarity-weighted coverage (the fuzzy path: wording that drifted shares most words, not all).

The plain-Python classes here are the reference. `errkb._candidates` (C, built with the
package when a compiler is there) does the same work without creating a Python object per
token, which is most of what a paste costs; `ERRKB_PURE_PYTHON=1` forces the reference.
Both are built from one `ExactPlan` / `WeightedPlan`, so what they index cannot diverge.
"""

from __future__ import annotations

import math
import os
import re
from collections import defaultdict
from dataclasses import dataclass

_TOKEN = re.compile(r"\w+")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
# Coverage and weight are compared at this resolution, so sums added up in another order
# (C, or another Python) rank and cut the same way.
_RESOLUTION = 1e9
_SLACK = 1e-9

try:
    if os.environ.get("ERRKB_PURE_PYTHON") == "1":
        raise ImportError("ERRKB_PURE_PYTHON=1")
    from errkb import _candidates as compiled
except ImportError:
    compiled = None


def tokens(text: str) -> set[str]:
    return set(_TOKEN.findall(text))


def word_list(text: str) -> list[str]:
    """The text's words (3+ characters, lower case), each once, in order of first appearance."""
    return list(dict.fromkeys(w.lower() for w in _WORD.findall(text)))


def _quantum(x: float) -> int:
    return math.floor(x * _RESOLUTION + 0.5)


# ---------------------------------------------------------------- exact candidates

@dataclass(frozen=True)
class ExactPlan:
    """Each usable entry filed under its two rarest tokens (by how many entries hold them).

    `groups` maps first token -> second token -> [(entry position, entry tokens)], positions
    ascending; `pieces[i]` is entry i's literal pieces in order (see `match.Entry.pieces`)."""

    groups: dict[str, dict[str, list[tuple[int, frozenset[str]]]]]
    pieces: list[tuple[str, ...]]
    limit: int

    @classmethod
    def build(cls, entry_tokens: list[frozenset[str] | None], pieces: list[tuple[str, ...]], limit: int) -> "ExactPlan":
        """`entry_tokens[i]` is None for an entry that can never match exactly."""
        in_entries = _in_entries(entry_tokens)
        groups: dict[str, dict[str, list[tuple[int, frozenset[str]]]]] = {}
        for i, toks in enumerate(entry_tokens):
            if toks:
                rarest = sorted(toks, key=lambda t: (in_entries[t], t))[:2]
                groups.setdefault(rarest[0], {}).setdefault(rarest[-1], []).append((i, toks))
        return cls(groups, pieces, limit)


def in_order(pieces: tuple[str, ...], text: str) -> bool:
    """Whether text holds every piece, each after the end of the one before (leftmost placement
    is enough: if any placement exists, the leftmost one does)."""
    pos = 0
    for piece in pieces:
        pos = text.find(piece, pos)
        if pos < 0:
            return False
        pos += len(piece)
    return True


class PyExactCandidates:
    """Set intersections over the paste's tokens: the paste opens just the groups whose two
    tokens it holds before any entry's full token set is compared."""

    def __init__(self, plan: ExactPlan) -> None:
        self.first_tokens = frozenset(plan.groups)
        self.groups = {first: (frozenset(by_second), {second: tuple(group) for second, group in by_second.items()})
                       for first, by_second in plan.groups.items()}
        self.pieces = plan.pieces
        self.limit = plan.limit

    def covered(self, found: set[str]) -> list[int]:
        """Positions of the entries whose every token is in `found`, ascending."""
        hits: list[int] = []
        for first in found & self.first_tokens:
            seconds, by_second = self.groups[first]
            for second in found & seconds:
                hits += [i for i, entry_tokens in by_second[second] if entry_tokens <= found]
        hits.sort()
        return hits

    def find(self, message_text: str, text: str) -> list[int]:
        """The first `limit` covered entries whose pieces are in `text` in order."""
        return [i for i in self.covered(tokens(message_text))[:self.limit] if in_order(self.pieces[i], text)]


def exact_candidates(plan: ExactPlan):
    if compiled is None:
        return PyExactCandidates(plan)
    return compiled.ExactCandidates(*exact_args(plan))


def exact_args(plan: ExactPlan) -> tuple:
    """The compiled selection's constructor arguments: plain lists, so they can be cached on
    disk (see `errkb.index_cache`) and the selection rebuilt without redoing this work."""
    ids: dict[str, int] = {}
    groups = [(ids.setdefault(first, len(ids)), ids.setdefault(second, len(ids)),
               [(i, [ids.setdefault(t, len(ids)) for t in sorted(toks)]) for i, toks in group])
              for first, by_second in plan.groups.items() for second, group in by_second.items()]
    return list(ids), groups, list(plan.pieces), plan.limit


# ---------------------------------------------------------------- weighted candidates

@dataclass(frozen=True)
class WeightedPlan:
    """Entry i's words (`entry_words[i]`, each with weight `idf[word]`) and total weight.

    A word in more than `common` entries is *common*: it says little, so it opens no entry
    itself (but its entries' rarest word, `anchors`), it only adds weight to entries already
    opened."""

    entry_words: list[tuple[str, ...]]
    entry_weight: list[float]
    idf: dict[str, float]
    common: frozenset[str]
    anchors: dict[str, list[int]]
    limit: int

    @classmethod
    def build(cls, entry_words: list[frozenset[str]], limit: int) -> "WeightedPlan":
        """Entries are expected most specific (most weight) first; see `match.MatchIndex`."""
        n = len(entry_words)
        in_entries = _in_entries(entry_words)
        idf = _idf(in_entries, n)
        ordered = [tuple(sorted(ws)) for ws in entry_words]
        weight = entry_weights(ordered, idf)
        rare_limit = max(20, n // 400)
        common = frozenset(w for w, count in in_entries.items() if count > rare_limit)
        # Every entry is also reachable through its two rarest words, so one made only of common
        # words ("dq must have the same dtype as q") is still opened when present, and when the
        # paste lacks one of them (a message cut before its "Reason: ...").
        anchors: dict[str, list[int]] = defaultdict(list)
        for i, ws in enumerate(ordered):
            for word in sorted(ws, key=lambda w: (in_entries[w], w))[:2]:
                anchors[word].append(i)
        return cls(ordered, weight, idf, common, dict(anchors), limit)


def word_idf(entry_words: list[frozenset[str]]) -> dict[str, float]:
    """Each word's weight: the rarer among entries, the more it says."""
    return _idf(_in_entries(entry_words), len(entry_words))


def _idf(in_entries: dict[str, int], n: int) -> dict[str, float]:
    return {w: math.log(1 + n / count) for w, count in in_entries.items()}


def _in_entries(entry_items) -> dict[str, int]:
    """How many entries hold each token or word (an entry may be None: it holds none)."""
    counts: dict[str, int] = defaultdict(int)
    for items in entry_items:
        for item in items or ():
            counts[item] += 1
    return counts


def entry_weights(entry_words, idf: dict[str, float]) -> list[float]:
    """Each entry's total word weight, correctly rounded (the same whatever the words' order)."""
    return [math.fsum(idf[w] for w in ws) or 1.0 for ws in entry_words]


class PyWeightedCandidates:
    """The paste's rarer words open entries and add their weight through posting lists; a
    common word's weight is added only to entries already opened (its posting list is long)."""

    def __init__(self, plan: WeightedPlan) -> None:
        self.entry_words = plan.entry_words
        self.entry_word_sets = [frozenset(ws) for ws in plan.entry_words]
        self.entry_weight = plan.entry_weight
        self.idf = plan.idf
        self.common = plan.common
        self.anchors = plan.anchors
        self.limit = plan.limit
        self.postings: dict[str, list[int]] = defaultdict(list)
        for i, ws in enumerate(plan.entry_words):
            for w in ws:
                self.postings[w].append(i)

    def find(self, message_text: str, min_coverage: float) -> list[tuple[int, float]]:
        """Entries holding at least `min_coverage` of their weight in the message text's words,
        best covered first (then most matched weight, then position): (position, coverage)."""
        idf = self.idf
        found = [w for w in word_list(message_text) if w in idf]
        found_set = set(found)
        common = [w for w in found if w in self.common]
        common_found = set(common)
        gained: dict[int, float] = {}
        for w in found:
            if w not in self.common:
                weight = idf[w]
                for i in self.postings[w]:
                    gained[i] = gained.get(i, 0.0) + weight
        for w in common:
            for i in self.anchors.get(w, ()):
                gained.setdefault(i, 0.0)
        common_total = 0.0
        for w in common:
            common_total += idf[w]
        scored = []
        for i, g in gained.items():
            weight = self.entry_weight[i]
            needed = min_coverage * weight - _SLACK
            if g + common_total < needed:
                continue  # cannot reach the coverage even with every common word
            if self.entry_word_sets[i] <= found_set:  # every word present: no need to add them up
                scored.append((-_quantum(1.0), -_quantum(weight), i, 1.0))
                continue
            for w in self.entry_words[i]:
                if w in common_found:
                    g += idf[w]
            if g >= needed:
                scored.append((-_quantum(g / weight), -_quantum(g), i, g / weight))
        scored.sort()
        return [(i, coverage) for _, _, i, coverage in scored[:self.limit]]


def weighted_candidates(plan: WeightedPlan):
    if compiled is None:
        return PyWeightedCandidates(plan)
    return compiled.WeightedCandidates(*weighted_args(plan))


def weighted_args(plan: WeightedPlan) -> tuple:
    """As `exact_args`, for the weighted selection."""
    ids = {w: k for k, w in enumerate(plan.idf)}
    return (list(ids), [plan.idf[w] for w in ids], [w in plan.common for w in ids],
            [[ids[w] for w in ws] for ws in plan.entry_words], plan.entry_weight,
            [plan.anchors.get(w, []) for w in ids], plan.limit)
