"""Match pasted errors to records and sites.

The index is built once: every distinct template becomes one entry. Entries whose every
literal token is in the paste are confirmed by their search pattern (exact, with parameter
values); failing that, entries found through an inverted index of their literal words
(weighted by rarity) are confirmed by fuzzy similarity of their literal text to a line of the
paste (wording that drifted between versions). Both candidate selections live in
`errkb.candidates` (compiled, with a plain-Python reference); ranking and scoring live here.
"""

from __future__ import annotations

import gc
import re
from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, NamedTuple

from rapidfuzz import fuzz, process

from errkb import candidates, refusals, templates
from errkb.candidates import tokens
from errkb.paste import Paste, cut_spans, message_text_with_info, parse

if TYPE_CHECKING:  # the index is built from a Dataset, or loaded without one (errkb.index_cache)
    from errkb.dataset import Dataset

MIN_SCORE = 0.75  # below this a candidate is noise, and "no match" is the honest answer
MIN_EXACT_LITERAL = 8  # characters of literal text a template needs before an exact match counts
MAX_CANDIDATES = 64
FUZZY_MIN_RATIO = 88.0
FUZZY_CANDIDATES = 12
BARE_FUZZY_MIN = 0.83  # a reworded message as a bare site, with no frame in its package (see docs/lookup.md)
FUZZY_MIN_COVERAGE = 0.7  # a reworded message still shares most of its words
MIN_FUZZY_LITERAL = 30  # characters of literal text a fuzzy match needs ("q must be a CUDA tensor" is too little)
MIN_CASELESS_LITERAL = 30  # characters of literal text a match that ignores case needs
CASELESS_PENALTY = 0.05  # its case was changed: a little less sure than an exact match
MIN_BARE_SITE_WORDS = 3  # fewer words of literal text, and a bare site needs its package in the frames
MIN_CUT_PREFIX = 24  # characters a cut-off last line needs before its start can name a message
MIN_BARE_CUT = 48  # characters a cut-off last line needs to name one record's message with no frame or evidence
MIN_VALUE_HEAD = 16  # characters before its first value that an entry's head needs to name a cut line
MIN_CUT_TAIL_WORDS = 3  # words (the cut one included) a paste's first line, cut inside a word, needs
MIN_CUT_TAIL_LITERAL = 12  # characters of the message's literal text such a line must still hold
CUT_SCORE = 0.85  # a message seen only in part: less sure than a whole one
RECORD_BONUS = 0.02
EVIDENCE_BONUS = 0.05
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
GENERIC_CLASSES = frozenset({"Error", "Exception", "Warning"})
_ERROR_CLASS = re.compile(r"\s*([\w.]*(?:Error|Exception|Warning))\s*:\s*")
_LAST_FRAME = re.compile(r'File "([^"\n]+)", line \d+, in (\w+)[^\n]*\n(?:[ \t]*(?![ \t]|File ")[^\n]*\n){0,3}\Z')  # log prefixes may take the indent
_NUMBERED = re.compile(r"\b\d+\.(?:\d+|x)\b")  # a version or an arch ("SM 10.x", "8.0") pins a message down too
_LEADING_WORD = re.compile(r"^\w+")
_QUOTED_NAME = re.compile(r"'\w+'|\"\w+\"")
_TRAILING_WORD = re.compile(r"\w+\Z")
# Messages (placeholders and quotes removed) whose words do not say which library raised them:
# Python's own, re-raised word for word, and the input checks every CUDA extension writes.
GENERIC_MESSAGES = frozenset({
    "module has no attribute", "object has no attribute", "has no attribute", "No module named",
    "got an unexpected keyword argument", "missing required positional argument",
    "takes positional arguments but were given", "is not supported", "not supported",
    "must be a CUDA tensor", "must be on CUDA", "must be contiguous", "must be on the same device",
})
# Wording fixed by Python or by PyTorch's TORCH_CHECK, where the quoted name or condition is what
# the message says: it never drifts between releases, so a fuzzy match (`No module named 'torch'`
# against `... 'torch.nn.attention'`, `Expected attn_bias.stride(1) == 0 to be true` against
# `Expected is_sm80 ...`) is another error.
FIXED_WORDING = re.compile(r"No module named|cannot import name|cannot access local variable"
                           r"|local variable .* referenced|name '.*' is not defined|Expected .* to be true, but got false")
# A warning whose own text says nothing failed: the program goes on (an optional dependency is
# missing, a message below it is expected). Such a notice answers only through a record, and an
# error it prints as caught (`Error caught was: {e}`) is part of the notice, not an error.
NOTICE_PHRASES = ("can be ignored", "will not be enabled", "ignore import error")
WARNING_KINDS = frozenset({"warning", "log-warning", "check-warning"})
# Harvested messages that are not attention's alone: Triton raises its compile, resource and
# language errors for every kernel, and SGLang's model runner and transformers' modeling_utils.py
# are harvested whole for their backend checks but also load models (vLLM's worker.py, for its
# dtype check, also sizes the KV cache; torch's cpp_extension.py, harvested for the build checks
# users meet building flash-attn or xformers, builds every extension). A bare site from them answers
# only when the paste shows attention code (ATTENTION_HINT); records linking them keep their own rules.
SHARED_PACKAGES = frozenset({"triton"})
SHARED_FILES = frozenset({("sglang", "python/sglang/srt/model_executor/model_runner.py"), ("vllm", "vllm/worker/worker.py"),
                          ("vllm", "vllm/platforms/interface.py"), ("torch", "torch/utils/cpp_extension.py"),
                          ("transformers", "src/transformers/modeling_utils.py")})
ATTENTION_HINT = re.compile(r"attn|attention|sdpa|fmha|flash_?(?:attn|fwd|bwd|mla|infer)|xformers|\b(?:mla|mha)\b",
                            re.IGNORECASE)
# What a warning must name to be about attention: its backends, kernels, KV cache, head sizes, or
# an engine's compiled kernels (`vllm._C`, whose failed import issue #15 counts as an ABI mismatch)
ATTENTION_WORDS = re.compile(r"attn|attention|sdpa|fmha|flash|infer|xformers|triton|cudnn|cutlass|\._C\b"
                             r"|\b(?:mla|mha|gqa|kv|fp8|head)", re.IGNORECASE)
_STOP = frozenset("the and for not with are this that was you your use got but has have from into".split())


_CALLEE = re.compile(r"\b([A-Za-z_]\w*)\(\)")
_ACRONYM = re.compile(r"\b[A-Z][A-Z0-9]+\b")
_EXTENSION_CALL = re.compile(r"\b[A-Za-z_]\w*\.(\w+)\(\s*$")  # "... = flash_attn_gpu.varlen_fwd("
_DUNDER_CALL = re.compile(r"\.?__\w+__\(\)")


def _skeleton(literal: str) -> str:
    """The literal text without quotes or a name quoted in it (`'tuple' object has no attribute`
    is Python's wording for any type, whichever a package wrote in), and without a dunder
    method's name (`{cls}.__init__() takes ...` is Python's own wording for any class's constructor)."""
    return " ".join(_QUOTED_NAME.sub(" ", _DUNDER_CALL.sub(" ", literal)).replace("'", " ").replace('"', " ").split())


def words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)} - _STOP


def whole_text(template: str) -> str:
    """The template's literal text with the word characters next to each placeholder cut off:
    a value may be glued to them (`{name}_proj`), so only what is left is in every instance
    as whole words. Placeholders become blanks. The search pattern bounds the template's ends
    with word boundaries, so every token of this text is a whole token of any match."""
    parts = templates.parse(template)
    out = []
    for i, (literal, field) in enumerate(parts):
        if i > 0:  # parse() puts a placeholder between consecutive parts
            literal = _LEADING_WORD.sub("", literal)
        if field is not None:
            literal = _TRAILING_WORD.sub("", literal)
        out.append(literal)
    return " ".join(out)


class SiteRef(NamedTuple):
    """What matching needs of a harvested site (plain values, so the index can be cached)."""

    id: str
    package: str
    path: str
    versions: tuple[str, ...]
    kind: str
    function: str = ""  # the function that raises it, where the harvest knows it
    error_class: str = ""


class EvidenceRef(NamedTuple):
    """A text whose presence in a paste lets a record answer (see `model.Evidence`)."""

    contains: str
    package: str


class View(NamedTuple):
    """An entry as one paste sees it (see Entry.seen_from)."""

    evidence: str | None  # why the traceback favours it, or None
    ids: tuple[str, ...]  # the records (or the one site) a hit counts for
    kind: str | None  # "record", "site", or None when it counts for neither
    order: tuple[str, ...]  # its packages, those the traceback points to first


@dataclass
class Entry:
    """One distinct template and every site (package, file, version) that emits it."""

    template: str
    literal: str
    words: set[str]
    tokens: set[str]
    sites: list[SiteRef]
    record_ids: list[str]

    @cached_property
    def pieces(self) -> tuple[str, ...]:
        """Its literal text between blanks and placeholders, in order: every match holds each
        piece exactly, one after the other, so a text missing that sequence needs no regex."""
        return tuple(chunk for literal, _ in templates.parse(self.template) for chunk in literal.split())

    @cached_property
    def finder(self) -> templates.Finder:
        """Compiled on first use: most entries are never tried, and compiling all costs seconds."""
        return templates.Finder(self.template)

    @property
    def pattern(self) -> re.Pattern[str]:
        return self.finder.pattern

    @cached_property
    def caseless_pattern(self) -> re.Pattern[str]:
        """The search pattern ignoring letter case (the last resort of a paste nothing matched)."""
        return re.compile(self.pattern.pattern, re.IGNORECASE)

    @cached_property
    def exact_score(self) -> float:
        """An exact match's score: longer messages say more."""
        return 0.7 + 0.3 * min(1.0, len(self.literal) / 40)

    @cached_property
    def exact_why(self) -> str:
        return f"exact match of the message template ({len(self.pattern.groupindex)} parameters)"

    @cached_property
    def packages(self) -> frozenset[str]:
        return frozenset(self.versions_by_package)

    @cached_property
    def versions_by_package(self) -> dict[str, tuple[str, ...]]:
        """Versions that emit the template, per package (packages by name, sites by path)."""
        out: dict[str, list[str]] = {}
        for site in sorted(self.sites, key=lambda s: (s.package, s.path)):
            seen = out.setdefault(site.package, [])
            seen += [v for v in site.versions if v not in seen]
        return {package: tuple(versions) for package, versions in out.items()}

    @cached_property
    def package_order(self) -> tuple[str, ...]:
        return tuple(self.versions_by_package)

    @cached_property
    def _views(self) -> dict[frozenset[str], "View"]:
        return {}

    def seen_from(self, pointed: frozenset[str]) -> "View":
        """What a hit on this entry counts as in a paste whose traceback frames point to the
        packages `pointed`; worked out once per set of packages (pastes repeat them)."""
        if (view := self._views.get(pointed)) is None:
            pointed_to = self.packages & pointed
            order = self.package_order
            evidence = None
            if pointed_to:
                evidence = "traceback frames point to " + ", ".join(sorted(pointed_to))
                order = tuple(sorted(order, key=lambda pkg: pkg not in pointed))
            if self.record_ids:
                ids, kind = tuple(self.record_ids), "record"
            elif order and not self.info_only and not self.notice and not self.shared_warning \
                    and not self.aside_warning and (pointed_to or not self.says_little):  # a bare site
                ids, kind = (self.first_site[order[0]],), "site"
            else:
                ids, kind = (), None
            view = self._views[pointed] = View(evidence, ids, kind, order)
        return view

    @cached_property
    def warning_classes(self) -> frozenset[str]:
        """The classes its sites warn or raise under, when every one is a warning class; else none."""
        classes = frozenset(site.error_class.rpartition(".")[2] for site in self.sites)
        return classes if classes and all(c.endswith("Warning") for c in classes) else frozenset()

    @cached_property
    def info_only(self) -> bool:
        """Only INFO log lines print it: never an answer by itself, only through a record."""
        return all(site.kind == "log-info" for site in self.sites)

    @cached_property
    def shared_warning(self) -> bool:
        """A warning from a file that is not attention's alone (a build tool noting a missing ninja
        or arch list): it says how some build or load went, not why attention failed, so it answers
        only through a record."""
        return self.shared and all(site.kind in WARNING_KINDS for site in self.sites)

    @cached_property
    def aside_warning(self) -> bool:
        """A warning whose text names nothing of attention (a package manager, a device order, a
        CPU cache size, a failed import of another extension): logged on the way by a file
        harvested whole for its backend checks, it answers only through a record."""
        return bool(self.sites) and all(site.kind in WARNING_KINDS for site in self.sites) \
            and ATTENTION_WORDS.search(self.literal) is None

    @cached_property
    def notice(self) -> bool:
        """A warning whose text says nothing failed (NOTICE_PHRASES): never an answer by itself."""
        lowered = self.literal.lower()
        return (all(site.kind in WARNING_KINDS for site in self.sites) and bool(self.sites)
                and any(phrase in lowered for phrase in NOTICE_PHRASES))

    @cached_property
    def acronyms(self) -> frozenset[str]:
        """The all-capital names its text holds (MLA, FP8, KV): like a function's name, a
        reworded message keeps them, and another name is another message."""
        return frozenset(_ACRONYM.findall(self.literal))

    @cached_property
    def raised_as(self) -> frozenset[str]:
        """The exception classes (last dotted part) its sites raise, or none when a site's class
        is not known: a line that prints another class is another message."""
        classes = frozenset(site.error_class.rpartition(".")[2] for site in self.sites)
        return classes if self.sites and "" not in classes else frozenset()

    @cached_property
    def callees(self) -> set[str]:
        """The functions its text names by a call (`plan()`), lower-cased: Python's own wording
        about arguments names the function, and another function's message is not this one."""
        return {name.lower() for name in _CALLEE.findall(self.literal) if len(name) >= 3 and not name.startswith("__")}

    @cached_property
    def shared(self) -> bool:
        """Every site is in a package or file whose messages are not attention's alone."""
        return bool(self.sites) and all(site.package in SHARED_PACKAGES or (site.package, site.path) in SHARED_FILES
                                        for site in self.sites)

    @cached_property
    def says_little(self) -> bool:
        """A bare site whose text alone says little: it repeats one of Python's own messages
        (`module {name} has no attribute {attr}` from a module __getattr__) or a check every CUDA
        extension makes (`{name} must be a CUDA tensor`), or holds fewer than three words
        (`internal error`, `Unsupported {name}: {dtype}`). It answers only when the traceback
        points into its package."""
        named = len(words(self.literal)) + len(_NUMBERED.findall(self.literal))
        return _skeleton(self.literal) in GENERIC_MESSAGES or named < MIN_BARE_SITE_WORDS

    @cached_property
    def sorted_packages(self) -> tuple[str, ...]:
        return tuple(sorted(self.versions_by_package))

    @cached_property
    def specificity(self) -> int:
        """Literal characters the template pins down: breaks ties between equal scores."""
        return len(self.literal)

    @cached_property
    def first_site(self) -> dict[str, str]:
        """Each package's first site by path (its id): the one a bare-site match names."""
        out: dict[str, str] = {}
        for site in sorted(self.sites, key=lambda s: (s.package, s.path)):
            out.setdefault(site.package, site.id)
        return out


def exact_plan(entries: list[Entry]) -> candidates.ExactPlan:
    """Entries too short to match exactly, or without a word, are left out."""
    return candidates.ExactPlan.build(
        [frozenset(e.tokens) if len(e.literal) >= MIN_EXACT_LITERAL and e.words else None for e in entries],
        [e.pieces for e in entries], MAX_CANDIDATES)


def weighted_plan(entries: list[Entry]) -> candidates.WeightedPlan:
    return candidates.WeightedPlan.build([frozenset(e.words) for e in entries], MAX_CANDIDATES)


@dataclass(slots=True)
class Match:
    id: str
    kind: str  # "record" or "site"
    score: float
    span: tuple[int, int]  # offsets into the pasted text
    matched_text: str
    params: dict[str, str]
    template: str
    packages: list[str]
    versions: dict[str, tuple[str, ...]]
    why: list[str] = field(default_factory=list)
    specificity: int = 0  # literal characters the template pins down; breaks score ties


# (match id, "record" or "site", score, (entry, raw score, span in the cleaned text, params, why))
Ranked = tuple[str, str, float, tuple]


@contextmanager
def collector_paused():
    """Building the index allocates many objects and no reference cycles, and the cyclic
    collector would rescan all of them again and again (half the build time)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class MatchIndex:
    dataset: "Dataset | None"  # None when loaded from the cache (errkb.index_cache)

    def __init__(self, dataset: "Dataset") -> None:
        with collector_paused():
            self._build(dataset)

    def _build(self, dataset: "Dataset") -> None:
        self.dataset = dataset
        linked: dict[str, list[str]] = defaultdict(list)
        for record in dataset.records:
            for sid in record.sites:
                linked[sid].append(record.id)
        by_template: dict[str, list[SiteRef]] = defaultdict(list)
        for site in dataset.sites.values():
            by_template[site.template].append(_site_ref(site))
        # A record's own canonical template is searchable too, so records match even when
        # their wording is newer or older than every harvested site.
        entries: list[Entry] = []
        for template, sites in by_template.items():
            record_ids = sorted({rid for s in sites for rid in linked.get(s.id, [])})
            entries.append(self._entry(template, sites, record_ids))
        for record in dataset.records:
            if record.template not in by_template:
                sites = [_site_ref(dataset.sites[sid]) for sid in record.sites if sid in dataset.sites]
                entries.append(self._entry(record.template, sites, [record.id]))
        # Entries are kept most specific (most literal weight) first, so an entry's position
        # is its rank among candidates and sorting candidates needs no key.
        weights = candidates.entry_weights([e.words for e in entries], candidates.word_idf([e.words for e in entries]))
        self.entries = [entries[i] for i in sorted(range(len(entries)), key=lambda i: -weights[i])]
        self.evidence_of = {r.id: tuple(EvidenceRef(e.contains, e.package) for e in r.evidence)
                            for r in dataset.records if r.evidence}
        self.file_evidence_of = {r.id: tuple(EvidenceRef(e.contains, e.package) for e in r.failing_file)
                                 for r in dataset.records if r.failing_file}
        # wrappers, advisory warnings and catch-alls: when another record matches too, that one answers first
        self.wrappers = frozenset(r.id for r in dataset.records if r.wraps_cause or r.advisory or r.catch_all)
        # Each entry's text up to its first placeholder, sorted, to find what a cut-off line begins.
        self.heads = sorted((head, i) for i, e in enumerate(self.entries)
                            if len(head := " ".join(templates.parse(e.template)[0][0].split())) >= MIN_CUT_PREFIX)
        self.exact_candidates = candidates.exact_candidates(exact_plan(self.entries))
        self.weighted_candidates = candidates.weighted_candidates(weighted_plan(self.entries))

    @cached_property
    def evidence_breadth(self) -> dict[str, int]:
        """How many packages each record's evidence names, with the libraries whose failing files
        it covers (`failing_file`): a record about one library is more specific than a generic
        one listing many (ranking's tie-break)."""
        files = self.file_evidence_of
        return {rid: len({e.package for e in (*refs, *files.get(rid, ()))}) for rid, refs in self.evidence_of.items()}

    @cached_property
    def evidence_packages(self) -> frozenset[str]:
        """Every package a record's evidence names (what errkb.projects can resolve a name to)."""
        return frozenset(ref.package for refs in self.evidence_of.values() for ref in refs)

    @classmethod
    def assemble(cls, entries: Sequence[Entry], evidence_of: dict[str, tuple[EvidenceRef, ...]],
                 wrappers: frozenset[str], heads: list[tuple[str, int]], exact_candidates,
                 weighted_candidates, file_evidence_of: dict[str, tuple[EvidenceRef, ...]]) -> "MatchIndex":
        """An index from parts built earlier (errkb.index_cache keeps them on disk)."""
        index = cls.__new__(cls)
        index.dataset = None
        index.entries, index.evidence_of, index.wrappers, index.heads = entries, evidence_of, wrappers, heads
        index.file_evidence_of = file_evidence_of
        index.exact_candidates, index.weighted_candidates = exact_candidates, weighted_candidates
        return index

    @staticmethod
    def _entry(template: str, sites: list[SiteRef], record_ids: list[str]) -> Entry:
        literal = re.sub(r"\s+", " ", templates.literal_text(template)).strip()
        whole = whole_text(template)
        return Entry(template, literal, words(whole), tokens(whole), sites, record_ids)

    # ------------------------------------------------------------ matching

    def match(self, text: str, limit: int = 5, exhaustive: bool = False,
              project: frozenset[str] = frozenset()) -> list[Match]:
        """Ranked matches for a paste. `exhaustive` runs every template's pattern in turn, with
        no candidate selection or prefilter (the naive baseline of the benchmark; same scoring).
        `project`: the packages the user said the paste comes from (errkb.projects)."""
        paste, ranked = self.ranked(text, limit, exhaustive, project)
        return [self._match(match_id, kind, score, hit, paste) for match_id, kind, score, hit in ranked]

    def withheld(self, paste: Paste, limit: int = 3) -> list[tuple[str, tuple[EvidenceRef, ...]]]:
        """Records whose message the paste holds word for word but which answer only when the
        paste names their library (`evidence`), and it names none: a bare `no kernel image`
        line. Not matches (such a line is more often some other CUDA project's, see
        docs/lookup.md), but what to read and what the paste would need; the broadest first
        (the generic record says how to tell the libraries apart). For a paste nothing matched."""
        evidence_of, found = self.evidence_of, {}
        for entry, score, *_ in self._exact_hits(paste.message_text, paste.text, paste):
            for record_id in entry.record_ids:
                refs = evidence_of.get(record_id)
                if refs and score + RECORD_BONUS >= MIN_SCORE and _named_evidence(refs, paste) is None:
                    found[record_id] = refs
        breadth = self.evidence_breadth
        return sorted(found.items(), key=lambda item: (-breadth[item[0]], item[0]))[:limit]

    def ranked(self, text: str, limit: int = 5, exhaustive: bool = False,
               project: frozenset[str] = frozenset()) -> tuple[Paste, list[Ranked]]:
        """The cleaned paste and its best hits, best first, as plain tuples: `match` makes them
        Match objects, the API writes them as JSON straight away (see `kb.match_json`)."""
        paste = parse(text)
        paste.project = project
        message_text = paste.message_text
        hits = []
        # An instance holds every literal token, so only fully covered entries can match exactly.
        if exhaustive:
            hits += [(entry, *found) for entry in self.entries if (found := self._exact(entry, paste, exhaustive))]
            refused = set()
            top = max([hit[1] for hit in hits], default=0.0)
        else:
            hits = self._exact_hits(message_text, paste.text, paste, refused := set())
            top = max([hit[1] for hit in hits], default=0.0)
        # Fuzzy matching is the slow path: only when nothing specific matched exactly.
        if top < 0.9:
            hits += self._fuzzy_hits(paste, self._fuzzy_lines(paste), {id(entry) for entry, *_ in hits} | refused)
        if notices := [_with_its_traceback(hit[2], paste.text) for hit in hits if hit[0].notice]:
            hits = _outside_notices(hits, notices, paste.text)
        hits = refusals.weigh_reasons(hits, paste.text)
        ranked = self._rank(hits, paste, limit) if hits else []
        if ranked or exhaustive:
            return paste, ranked
        # Nothing at all: the message may have been retyped or re-cased ("valueerror: bfloat16 ...").
        if caseless := [hit for hit in self._ignoring_case(paste, message_text) if id(hit[0]) not in refused]:
            return paste, self._rank(caseless, paste, limit)
        # Still nothing, and no error line said anything: an INFO line may be the explanation
        # (vLLM logs at INFO why it picked or skipped a backend).
        if paste.info_lines and (informed := self._exact_hits(message_text_with_info(paste), paste.text)):
            for hit in informed:
                hit[4].append("found on an INFO line (no other line of the paste matched)")
            return paste, self._rank(informed, paste, limit)
        # A bare `AssertionError` says nothing by itself: the traceback's source line above it, the
        # assert statement, is what failed (records of asserts without a message are their statement).
        if (statements := _bare_assert_statements(paste.text)) and (asserted := self._exact_hits(statements, paste.text)):
            for hit in asserted:
                hit[4].append("the assert statement printed above a bare AssertionError")
            return paste, self._rank(asserted, paste, limit)
        # A line broken inside a word (`... not supported in th` / `is architecture ...`): a copy
        # from a terminal or a log viewer that wraps long lines at a fixed width. Joined there, a
        # message that only the join makes whole can answer.
        if (unwrapped := _unwrapped(paste)) and (joined := self._exact_hits(unwrapped.message_text, unwrapped.text)):
            breaks = unwrapped.cuts[0][0][1:]
            joined = [hit for hit in joined if any(hit[2][0] < b < hit[2][1] for b in breaks)]
            for hit in joined:
                hit[4].append("the message runs across a line broken inside a word, joined there")
            if joined:
                return unwrapped, self._rank(joined, unwrapped, limit)
        # A message quoted in the writer's prose, wrapped between two words by their editor and
        # often without its final period: only the two lines joined hold enough of it.
        if wrapped := self._fuzzy_hits(paste, _wrapped_pairs(self._fuzzy_lines(paste)), refused):
            for hit in wrapped:
                hit[4].append("the message runs across two lines of prose, joined there")
            return paste, self._rank(wrapped, paste, limit)
        if cut := self._cut_short(paste):
            return paste, self._rank(cut, paste, limit)
        if cut := self._cut_at_start(paste):
            return paste, self._rank(cut, paste, limit)
        return paste, []

    @staticmethod
    def _fuzzy_lines(paste: Paste) -> list[tuple[int, str]]:
        """The lines a reworded message is looked for in: the last 200 message lines, less those
        of a listing (the lines a tool prints of a file it quotes)."""
        lines = paste.message_lines()[-200:]
        if listed := _listed_lines(paste.text):
            lines = [line for line in lines if not _on_a_listed_line(listed, line[0])]
        return lines

    def _fuzzy_hits(self, paste: Paste, lines: list[tuple[int, str]], skip: set[int]) -> list[tuple]:
        """Fuzzy hits on `lines` for the best candidates of the paste's message text, less the
        entries in `skip` (ids); a reworded message answers as a bare site of a package no frame
        points to only when close."""
        if not lines or not (found := self.weighted_candidates.find(paste.message_text, FUZZY_MIN_COVERAGE)):
            return []
        tried = [e for i, _ in found[:FUZZY_CANDIDATES] if id(e := self.entries[i]) not in skip]
        return [h for h in self._fuzzy(tried, lines) if h[0].record_ids or h[0].packages & paste.packages
                or h[1] >= BARE_FUZZY_MIN]

    def _cut_short(self, paste: Paste) -> list[tuple]:
        """A paste that ends inside a message (a truncated log): its last line is the start of
        the message of an entry whose package the traceback points into (or whose record's
        evidence the paste holds), or, when only a few characters are left, of one raised where
        the last frame is."""
        lines = paste.message_lines()
        if not lines:
            return []
        offset, line = lines[-1]
        m = _ERROR_CLASS.match(line)
        start = m.end() if m else 0
        cut = " ".join(line[start:].split())
        if len(cut) < MIN_CUT_PREFIX:
            return self._cut_after_frame(paste, offset, line, m, cut) if m and cut else []
        hits, begun, printed = [], [], _printed_class(line)
        for head, i in self.heads[bisect_left(self.heads, (cut,)):]:
            if not head.startswith(cut):
                break
            entry = self.entries[i]
            if printed and entry.raised_as and printed not in entry.raised_as:
                continue  # the line prints another class: another message with the same start
            begun.append(entry)
            # a record that needs evidence is kept here and judged by it in _rank
            if entry.packages & paste.packages or (entry.record_ids and all(r in self.evidence_of for r in entry.record_ids)):
                why = f"the paste ends inside this message: its first {len(cut)} characters"
                hits.append((entry, entry.exact_score * CUT_SCORE, (offset + start, offset + len(line)), {}, [why]))
        # a long start that only one message of the printed class (or one record's messages) begins with names it, no frames needed
        if not hits and len(cut) >= MIN_BARE_CUT and (len(begun) == 1 or len({r for e in begun for r in e.record_ids}) == 1
                                                      and all(e.record_ids for e in begun)):
            why = f"the paste ends inside this message: its first {len(cut)} characters, which only this message begins with"
            hits = [(e, e.exact_score * CUT_SCORE, (offset + start, offset + len(line)), {}, [why]) for e in begun]
        if not hits and paste.packages:
            hits = self._cut_past_the_head(paste, offset + start, offset + len(line), cut)
        return hits[:MAX_CANDIDATES]

    @cached_property
    def heads_before_a_value(self) -> dict[str, list[int]]:
        """Each entry's text up to its first placeholder (at least MIN_VALUE_HEAD characters,
        blanks collapsed) -> the entries; a head that ends in a blank keeps one."""
        heads: dict[str, list[int]] = {}
        for i, entry in enumerate(self.entries):
            literal, field = templates.parse(entry.template)[0]
            head = " ".join(literal.split()) + (" " if literal[-1:].isspace() else "")
            if field is not None and len(head) >= MIN_VALUE_HEAD:
                heads.setdefault(head, []).append(i)
        return heads

    def _cut_past_the_head(self, paste: Paste, start: int, end: int, cut: str) -> list[tuple]:
        """A last line cut off after an entry's head, inside or past its first value (`No operator
        found for `memory_efficient_`): any text can follow a head there, so the head names the
        message only when the traceback's frames are in the entry's package; the longest head wins."""
        for k in range(len(cut), MIN_VALUE_HEAD - 1, -1):
            entries = [self.entries[i] for i in self.heads_before_a_value.get(cut[:k], ())]
            if hits := [(entry, entry.exact_score * CUT_SCORE, (start, end), {},
                         [f"the paste ends inside this message, after its first {k} characters; the frames are in its package"])
                        for entry in entries if entry.packages & paste.packages]:
                return hits
        return []

    def _cut_after_frame(self, paste: Paste, offset: int, line: str, m: re.Match[str], cut: str) -> list[tuple]:
        """A message cut off after a few characters, right under the frame that raised it: the
        frame's file and function and the exception class name the check (issue #15: frames say
        exactly which check it was), and the few characters left must begin its message. When
        the frame's line calls into a compiled extension (`flash_attn_gpu.varlen_fwd(`), the check
        is the C++ function of that name in the package the frame belongs to."""
        frame = _LAST_FRAME.search(paste.text, 0, offset)
        if not frame:
            return []
        path, function = frame.group(1), frame.group(2)
        error_class = m.group(1).rpartition(".")[2]
        tail = frame.group(0).split("\n", 2)
        raisers = [(function, lambda s: path.endswith(_tail(s.path)), f"{function}, {_tail(path)}")]
        if len(tail) > 2 and (call := _EXTENSION_CALL.search(tail[1])) and paste.packages:
            callee = call.group(1)
            raisers += [(f, lambda s: s.package in paste.packages, f"{f}, called as {call.group(0)}")
                        for f in self.raisers if f == callee or f.endswith("_" + callee)]
        hits = []
        for name, where, said in raisers:
            for i in self.raisers.get(name, ()):
                entry = self.entries[i]
                head = " ".join(templates.parse(entry.template)[0][0].split())
                if not (head.startswith(cut) or cut.startswith(head)):  # a head "" begins with a placeholder
                    continue
                if any(s.function == name and s.error_class == error_class and where(s) for s in entry.sites):
                    why = (f"the paste ends {len(cut)} characters into this message, under the frame that raises"
                           f" it ({error_class} in {said})")
                    hits.append((entry, entry.exact_score * CUT_SCORE, (offset + m.start(1), offset + len(line)), {}, [why]))
            if hits:
                break
        return hits[:MAX_CANDIDATES]

    def _cut_at_start(self, paste: Paste) -> list[tuple]:
        """A paste that begins inside a message (copied from the middle of a line): its first line
        starts inside a word of the message and runs to the message's end (`mension at most 256`).
        The rest of the message must be read off whole, values included, and every entry whose end
        it fits must be one package's: a tail several libraries' messages share says too little."""
        lines = paste.message_lines()
        if not lines or paste.text[:lines[0][0]].strip():
            return []  # the paste begins with something else (a traceback header, a frame)
        offset, line = lines[0]
        fragment = " ".join(line.split())
        if not (first := _CUT_WORD.match(fragment)) or _ERROR_CLASS.match(line) \
                or len(_WORD_RUN.findall(fragment)) < MIN_CUT_TAIL_WORDS:
            return []
        word, hits, owners = first.group(), [], set()
        for entry in self.entries:
            if word not in entry.literal:
                continue
            if (tail := _tail_template(entry.template, word, fragment)) is None:
                continue
            literal = templates.literal_text(tail)
            if len(" ".join(literal.split())) < MIN_CUT_TAIL_LITERAL:
                continue
            owners |= set(entry.packages) or {f"record:{rid}" for rid in entry.record_ids}
            why = f"the paste begins inside this message: its last {len(fragment)} characters"
            start = offset + len(line) - len(line.lstrip())
            hits.append((entry, entry.exact_score * CUT_SCORE, (start, offset + len(line.rstrip())), {}, [why]))
        return hits[:MAX_CANDIDATES] if len(owners) == 1 else []

    @cached_property
    def raisers(self) -> dict[str, list[int]]:
        """Entries by the functions their sites are raised in (built on the first cut-off paste)."""
        out: dict[str, list[int]] = defaultdict(list)
        for i, entry in enumerate(self.entries):
            for function in {s.function for s in entry.sites if s.function}:
                out[function].append(i)
        return out

    def _exact_hits(self, message_text: str, text: str, paste: Paste | None = None,
                    refused: set[int] | None = None) -> list[tuple]:
        """Exact matches of the entries whose every literal token is in `message_text`. With the
        paste, a match found on a traceback's source line (`raise RuntimeError(f"No such
        operator {name} ...")` matches its own template) gives way to the same message printed
        on a message line further on, when there is one."""
        hits, entries, starts, listed = [], self.entries, None, None
        for i in self.exact_candidates.find(message_text, text):
            entry = entries[i]
            if m := entry.finder.search(text):
                if paste is not None and paste.frames:
                    starts = starts or _line_starts(paste)
                    m = _on_a_message_line(entry.pattern, text, m, starts)
                if _is_source_code(m):
                    if not _raises_this(entry, m.group()):
                        if refused is not None:  # nor is it this message reworded (the fuzzy path)
                            refused.add(id(entry))
                        continue  # the traceback shows the raise of another message with these words
                    if printed := entry.pattern.search(text, m.end()):
                        m = printed
                if listed is None:
                    listed = _listed_lines(text)
                if listed and _on_a_listed_line(listed, m.start()):
                    if (m := _printed_after(entry.pattern, text, m, listed)) is None:
                        continue
                hits.append((entry, entry.exact_score, m.span(), _params(m), [entry.exact_why]))
        return hits

    def _ignoring_case(self, paste: Paste, message_text: str) -> list[tuple]:
        """Exact matches that ignore letter case, for a paste nothing else matched. Candidates
        hold every word of the paste's message text (words are kept in lower case), and only
        long messages count, so a common short phrase in another case is not taken for an error."""
        hits, listed = [], _listed_lines(paste.text)
        for i, _ in self.weighted_candidates.find(message_text, 1.0)[:FUZZY_CANDIDATES]:
            entry = self.entries[i]
            if len(entry.literal) >= MIN_CASELESS_LITERAL and (m := entry.caseless_pattern.search(paste.text)):
                if listed and _on_a_listed_line(listed, m.start()):
                    if (m := _printed_after(entry.caseless_pattern, paste.text, m, listed)) is None:
                        continue
                params = _params(m)
                why = f"match of the message template ignoring letter case ({len(params)} parameters)"
                hits.append((entry, entry.exact_score - CASELESS_PENALTY, m.span(), params, [why]))
        return hits

    def _exact(self, entry: Entry, paste: Paste, exhaustive: bool = False):
        if len(entry.literal) < MIN_EXACT_LITERAL:
            return None
        m = entry.pattern.search(paste.text) if exhaustive else entry.finder.search(paste.text)
        if not m:
            return None
        return entry.exact_score, m.span(), _params(m), [entry.exact_why]

    @staticmethod
    def _fuzzy(entries: list[Entry], lines: list[tuple[int, str]]) -> list[tuple]:
        """Hits for the entries whose literal text is similar enough to a message line.

        partial_ratio forgives text around the message; token_set_ratio forgives reordered,
        inserted or renamed words (a message reworded between versions). Both also score a line
        that is a scrap of a long message high, so the line (with the next, where a long message
        wraps) must hold most of the message's words, as the whole paste must to make the entry
        a candidate. An entry's best line
        is the first with the highest of the two. Both scores are symmetric, so each line is
        compared with every literal in one call per scorer (rapidfuzz prepares the line once
        and loops in C) rather than each literal with every line."""
        # too little text to trust; or fixed wording, where the name is the message
        entries = [e for e in entries if len(e.literal) >= MIN_FUZZY_LITERAL and not FIXED_WORDING.match(e.literal)]
        literals = [e.literal for e in entries]
        literal_words = [words(literal) for literal in literals]
        callees = [e.callees for e in entries]
        acronyms = [e.acronyms for e in entries]
        raised_as = [e.raised_as for e in entries]
        line_words = [words(line) for _, line in lines] + [set()]
        around = [line_words[i] | line_words[i + 1] for i in range(len(lines))]  # a message may wrap once
        texts = [line for _, line in lines] + [""]
        best: dict[int, tuple[float, int]] = {}  # entry -> (score, line)
        for index, (_, line) in enumerate(lines if literals else ()):
            printed = _printed_class(line)
            for scorer in (fuzz.partial_ratio, fuzz.token_set_ratio):
                for _, score, k in process.extract(line, literals, scorer=scorer, score_cutoff=FUZZY_MIN_RATIO, limit=None):
                    if len(literal_words[k] & around[index]) < FUZZY_MIN_COVERAGE * len(literal_words[k]):
                        continue  # the line holds a few of the message's words, not the message
                    if not callees[k] <= around[index]:
                        continue  # a reworded message keeps the name of the function it is about
                    if not all(a in texts[index] or a in texts[index + 1] for a in acronyms[k]):
                        continue  # ... and the names it spells in capitals (MLA, FP8)
                    if printed and raised_as[k] and printed not in raised_as[k]:
                        continue  # ... and the class it is raised as, where the line prints one
                    if k not in best or score > best[k][0]:
                        best[k] = (score, index)
        hits = []
        for k, (ratio, index) in sorted(best.items()):
            literal = literals[k]
            score = 0.9 * ratio / 100 * (0.8 + 0.2 * min(1.0, len(literal) / 40))
            offset, line = lines[index]
            hits.append((entries[k], score, (offset, offset + len(line)), {},
                         [f"fuzzy match: {ratio:.0f}% of the message text (wording differs)"]))
        return hits

    def _rank(self, hits: list[tuple], paste: Paste, limit: int) -> list[Ranked]:
        """The best hit for each record or site, best first. Hits from a package that the
        traceback's frames point to score a little higher (their why says so). A record with
        evidence counts only when the paste holds some of it, and then scores higher too."""
        best: dict[str, tuple] = {}
        pointed = paste.packages
        evidence_of, file_evidence_of, breadth_of = self.evidence_of, self.file_evidence_of, self.evidence_breadth
        shows_attention = None
        for hit in hits:
            entry, score = hit[0], hit[1]
            evidence, ids, kind, _ = entry.seen_from(pointed)
            if evidence:
                hit[4].append(evidence)
                score += EVIDENCE_BONUS
                hit = (entry, score, *hit[2:])
            if kind is None:
                continue
            if kind == "site" and _other_warning_class(entry, paste.text, hit[2][0]):
                continue  # printed under another warning class: another copy of the text (a vendored one)
            if kind == "site" and entry.says_little and paste.frames and not _raised_in_its_file(entry, paste):
                continue  # Python's own words: the site's only when a frame is in the file that raises it
            if kind == "site" and entry.shared:
                if shows_attention is None:
                    shows_attention = ATTENTION_HINT.search(paste.original) is not None
                if not shows_attention:
                    continue  # a Triton (or model-loading) message with no attention code in sight
            score = min(1.0, score + RECORD_BONUS) if kind == "record" else min(1.0, score)
            specificity = entry.specificity
            for match_id in ids:
                own_score, own_hit, named = score, hit, None
                if match_id in evidence_of:
                    named = _named_evidence(evidence_of[match_id], paste)
                    if named is None:
                        continue
                    own_score = min(1.0, score + EVIDENCE_BONUS)
                    in_paste = named.contains in paste.original
                    said = (f"the paste names {named.contains} ({named.package})" if in_paste
                            else f"the project given is {named.package}")
                    own_hit = (*hit[:4], [*hit[4], said])
                if named is not None and (source := _source_file_on_line(paste.text, hit[2])) \
                        and not any(e.contains in source for e in evidence_of[match_id]) \
                        and not ATTENTION_SOURCE.search(source):
                    continue  # the line names the kernel file that failed, and it is no attention library's
                if match_id in file_evidence_of and (failed := _file_named_before(paste.text, hit[2][0])):
                    if (covered := next((e for e in file_evidence_of[match_id] if e.contains in failed), None)) is None:
                        continue  # another library's file failed
                    own_hit = (*own_hit[:4], [*own_hit[4], f"the file that failed is {covered.package}'s ({covered.contains})"])
                held = best.get(match_id)
                # a record's best hit; at equal scores its first in the paste, where the run failed
                if held is None or (held[0], -held[3][2][0]) < (own_score, -own_hit[2][0]):
                    # what the paste names ranks before what the user said it comes from (tier 0, 1)
                    best[match_id] = (own_score, specificity, kind, own_hit,
                                      (1 - in_paste, breadth_of[match_id]) if named else None,
                                      named.contains if named and in_paste else None)
        ranked = [item for item in best.items() if item[1][0] >= MIN_SCORE]
        if len(ranked) > 1:  # at equal scores (capped at 1.0), named evidence goes first, and of two
            # records that name it, the one about fewer packages (FA2's own before the generic CUDA one)
            # a wrapper's message follows the cause it prints (a record or a bare site), wherever both match
            wrappers = self.wrappers
            causes = any(i not in wrappers for i in dict(ranked))
            # of two wrappers, the one printed first: the inner (torch's "Error compiling objects
            # for extension" above pip's "Failed to build installable wheels")
            # (then a hit on a refusal listing's deciding reason before the listing's headline)
            ranked.sort(key=lambda item: (causes and item[0] in wrappers, -round(item[1][0], 3),
                                          item[1][4] is None, item[1][4] or (0, 0), item[1][2] != "record",
                                          item[1][3][2][0] if item[0] in wrappers else 0,
                                          refusals.DECIDING_WHY not in item[1][3][4], -item[1][1], item[0]))
            _narrowest_evidence_first(ranked, wrappers)
        return [(match_id, kind, score, hit) for match_id, (score, _, kind, hit, *_) in ranked[:limit]]

    @staticmethod
    def _match(match_id: str, kind: str, score: float, hit: tuple, paste: Paste) -> Match:
        entry, _, span, params, why = hit
        order = entry.seen_from(paste.packages).order
        by_package = entry.versions_by_package
        versions = dict(by_package) if order is entry.package_order else {pkg: by_package[pkg] for pkg in order}
        start, end = paste.span(*span)
        return Match(match_id, kind, score, (start, end), paste.original[start:end], params, entry.template,
                     list(entry.sorted_packages), versions, why, entry.specificity)


def _narrowest_evidence_first(ranked: list, wrappers) -> None:
    """Of two records ranked at the same score and breadth (and both wrappers or neither), the one
    whose named evidence holds the other's goes first: `xformers/flash_attn_3/_C` names xFormers'
    copy of FA3, the `flash_attn_3` inside it flash-attn's own."""
    if sum(1 for _, held in ranked if held[5]) < 2:
        return
    for j in range(1, len(ranked)):
        b_id, b = ranked[j]
        for i in range(j):
            a_id, a = ranked[i]
            if (round(a[0], 3) == round(b[0], 3) and a[4] == b[4] and (a_id in wrappers) == (b_id in wrappers)
                    and a[5] and b[5] and a[5] != b[5] and a[5] in b[5]):
                ranked.insert(i, ranked.pop(j))
                break


def _named_evidence(refs: tuple[EvidenceRef, ...], paste: Paste) -> EvidenceRef | None:
    """The first of a record's evidence the paste holds, else the first of a package the user
    said the paste comes from (`project`), else None."""
    for ref in refs:
        if ref.contains in paste.original:
            return ref
    return next((ref for ref in refs if ref.package in paste.project), None) if paste.project else None


def _raised_in_its_file(entry: Entry, paste: Paste) -> bool:
    """Whether a traceback frame of the paste is in a file one of the entry's sites is in (or
    the entry has a site in C++, which no Python frame shows)."""
    if any(not site.path.endswith(".py") for site in entry.sites):
        return True
    paths = {site.path.rsplit("src/", 1)[-1] for site in entry.sites}
    return any(path.endswith(own) for path, _ in paste.frames for own in paths)


_CAUGHT_TRACEBACK = re.compile(r"[^\n]*\n[ \t]*Traceback \(most recent call last\):\n(?:[ \t]+[^\n]*\n|\n)*?[^ \t\n][^\n]*")


def _with_its_traceback(span: tuple[int, int], text: str) -> tuple[int, int]:
    """A notice's span, with the traceback a logger prints right under it (`exc_info=True`: the
    caught error is part of the notice, as `Error caught was: {e}` is)."""
    m = _CAUGHT_TRACEBACK.match(text, span[1])
    return (span[0], m.end()) if m else span


def _outside_notices(hits: list[tuple], notices: list[tuple[int, int]], text: str) -> list[tuple]:
    """What a notice prints as caught is part of the notice: a hit inside a notice's span counts
    only where its message is printed again outside every notice (raised for real later on)."""
    def inside(span: tuple[int, int]) -> bool:
        return any(a <= span[0] and span[1] <= b for a, b in notices)

    kept = []
    for hit in hits:
        entry, span = hit[0], hit[2]
        if entry.notice or not inside(span):
            kept.append(hit)
            continue
        m = None
        for _ in range(4):
            m = entry.pattern.search(text, span[1])
            if m is None or not inside(m.span()):
                break
            span = m.span()
        if m is not None and not inside(m.span()):
            kept.append((entry, hit[1], m.span(), _params(m), hit[4]))
    return kept


def _line_starts(paste: Paste) -> tuple[list[int], list[int]]:
    """Where the message lines of the paste start and end, in the cleaned text."""
    lines = paste.message_lines()
    return [start for start, _ in lines], [start + len(line) for start, line in lines]


def _on_a_message_line(pattern: re.Pattern[str], text: str, m: re.Match[str], lines) -> re.Match[str]:
    """The first match from `m` on that starts on a message line (a few tries), else `m`."""
    starts, ends = lines
    found = m
    for _ in range(4):
        k = bisect_right(starts, found.start()) - 1
        if k >= 0 and found.start() < ends[k]:
            return found
        next_line = text.find("\n", found.start()) + 1  # a value may run on into the next line
        if not next_line or (found := pattern.search(text, next_line)) is None:
            return m
    return m


# IPython prints the source around each frame with line numbers, the current line marked by an arrow:
# `---> 422     raise ValueError(` and `    423         "XFormers does not support ...")`.
_IPYTHON_ARROW = re.compile(r"^-+> \d+ ", re.MULTILINE)
_IPYTHON_LISTED = re.compile(r"^(?:-+>|[ \t]*) ?\d+ .*$", re.MULTILINE)


def _listed_lines(text: str) -> list[tuple[int, int]]:
    """The (start, end) of every numbered source line of an IPython traceback in the text, or
    none when it holds no IPython arrow line (so a log line that starts with a number is text)."""
    if "-> " not in text or not _IPYTHON_ARROW.search(text):
        return []
    return [m.span() for m in _IPYTHON_LISTED.finditer(text)]


def _on_a_listed_line(listed: list[tuple[int, int]], offset: int) -> bool:
    k = bisect_right(listed, (offset, float("inf"))) - 1
    return k >= 0 and listed[k][0] <= offset < listed[k][1]


def _printed_after(pattern: re.Pattern[str], text: str, m: re.Match[str], listed) -> re.Match[str] | None:
    """The first match after `m` that is not on a source line the traceback lists (the message as
    printed), or None: a traceback cut off before its exception line shows the raise, not the error."""
    for _ in range(4):
        if (m := pattern.search(text, m.end())) is None or not _on_a_listed_line(listed, m.start()):
            return m
    return None


# A file named just before the message on its line: `ImportError: /x/vllm/_C.abi3.so: undefined symbol: ...`
_FILE_BEFORE = re.compile(r"(\S+?\.(?:so|pyd|dll)(?:\.\d+)*)[:\s]*\Z")


_INSTALL_DIR = re.compile(r".*[/\\](?:site|dist)-packages[/\\]")


# A C++/CUDA source file named on the message's own line: `CUDA error: ... (at D:\x\gemv_awq.cu:313)`,
# `CUDA error (/x/hopper/flash_fwd_launch_template.h:188): ...`: the kernel that failed.
# Only in parentheses: a compiler's `x.h:30:10: error:` names a header, not the failed kernel.
_SOURCE_FILE = re.compile(r"\((?:at )?([\w.\-/\\:]+\.(?:cu|cuh|cpp|cc|cxx|h|hpp))(?=[:)])")
# Words of an attention library's own file names (flash_fwd_*, fmha_*, mha_*, *_attn_*, sdp_utils, ...).
ATTENTION_SOURCE = re.compile(r"attn|attention|fmha|flash|mha|mla|sdp", re.IGNORECASE)


def _source_file_on_line(text: str, span: tuple[int, int]) -> str | None:
    """The source file(s) the matched line names, joined, or None."""
    start = text.rfind("\n", 0, span[0]) + 1
    end = text.find("\n", span[1])
    files = _SOURCE_FILE.findall(text, start, len(text) if end < 0 else end)
    return " ".join(files) or None


def _file_named_before(text: str, start: int) -> str | None:
    """The file the line names just before offset `start` (the failing shared object), or None.
    Inside an installed environment only its path below site-packages counts: the folders above
    it are the user's (`/opt/vllm/lib64/.../lmcache/c_ops.so` is LMCache's, not vLLM's)."""
    line_start = text.rfind("\n", 0, start) + 1
    m = _FILE_BEFORE.search(text, line_start, start)
    return _INSTALL_DIR.sub("", m.group(1)) if m else None


_PLACEHOLDER_VALUE = re.compile(r"\{\w*\}")


# A replacement field of an f-string starts with a name (`{major}`, `{x.shape}`, `{len(a)!r}`); a
# value printed in braces starts otherwise (torch's `CUDABFloat16Type{[1, 1, 1538]}`, `{0: 'a'}`).
_SOURCE_FIELD = re.compile(r"\{[A-Za-z_][^{}\n]*\}")


_MID_WORD_BREAK = re.compile(r"(?<=[a-z])\n(?=[a-z]+[ .,:;)'\"])")


def _printed_class(line: str) -> str | None:
    """The exception class a line begins with (`RuntimeError: ...`), its last dotted part; None
    for the bare words C++ warnings and loggers print (`Warning:`), which name no class."""
    name = m.group(1).rpartition(".")[2] if (m := _ERROR_CLASS.match(line)) else None
    return None if name in GENERIC_CLASSES else name


def _unwrapped(paste: Paste) -> Paste | None:
    """The paste with every line break that falls inside a word removed (a lower-case letter ends
    the line and a lower-case word starts the next one, unindented), or None when there is none.
    The join is one more cut, so spans still map to the user's own text."""
    breaks = [m.start() for m in _MID_WORD_BREAK.finditer(paste.text)]
    if not breaks:
        return None
    text, cut = cut_spans(paste.text, [(b, b + 1) for b in breaks])
    ends = [paste.text.count("\n", 0, b) for b in breaks]  # the line each break ends
    info = frozenset(i - sum(1 for e in ends if e < i) for i in paste.info_lines if i not in {e + 1 for e in ends})
    return Paste(paste.original, text, (cut, *paste.cuts), paste.frames, paste.packages, info, paste.project)


def _wrapped_pairs(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Two lines that are one sentence broken between words (a lower-case word or a comma ends
    the first, a lower-case word starts the next, unindented), joined by a space: a message quoted
    in the writer's prose and wrapped by their editor scores as a whole only joined. The join has
    the length of both lines and their break, so its span is the user's text."""
    return [(offset, f"{line} {after}") for (offset, line), (next_offset, after) in zip(lines, lines[1:])
            if next_offset == offset + len(line) + 1 and _BETWEEN_WORDS.match(line[-1:] + "\n" + after)]


_BETWEEN_WORDS = re.compile(r"[a-z,]\n[a-z][\w.]*[ .,:;)'\"`]")


_BARE_ASSERT = re.compile(r"^[ \t]*(assert [^\n]+)\n(?:[ \t]*\^+[ \t]*\n)*(?:\[rank\d+\]:)?[ \t]*AssertionError[ \t]*$", re.M)


def _bare_assert_statements(text: str) -> str:
    """The assert statements that a traceback shows right above a bare `AssertionError` line, one
    a line: Python prints no message for `assert cond`, only the statement in the frame."""
    return "".join(m.group(1).strip() + "\n" for m in _BARE_ASSERT.finditer(text))


def _is_source_code(m: re.Match[str]) -> bool:
    """The match is the f-string of the raise itself (a value reads `{name}`, or runs on into
    `{major}.{minor}")`): tracebacks whose frames the paste scanner does not know (IPython's,
    Colab's, frames without line numbers) show the source line too."""
    return "{" in m.group() and any(_PLACEHOLDER_VALUE.fullmatch(value) or _SOURCE_FIELD.search(value)
                                    for value in m.groupdict().values())


def _raises_this(entry: Entry, source: str) -> bool:
    """Whether the f-string the paste shows has the entry's values, with the entry's literal text
    between them: a raise of `f"Unsupported compute capability: {major}.{minor}"` is not the site
    whose message reads `Unsupported compute capability: {compute_capability}`, whatever the words
    share. The ends are left out (code or quotes around the message)."""
    shown = _SOURCE_FIELD.split(source)
    own = [literal for literal, _ in templates.parse(entry.template)]
    if templates.parse(entry.template)[-1][1] is not None:
        own.append("")  # the text after the last value
    return len(shown) == len(own) and all(" ".join(a.split()) == " ".join(b.split()) for a, b in zip(shown[1:-1], own[1:-1]))


_CUT_WORD = re.compile(r"[a-z]{4,}(?![\w-])")  # the part of a word left at a cut (lower case: a word's middle)
_WORD_RUN = re.compile(r"\w+")


def _tail_template(template: str, word: str, fragment: str) -> str | None:
    """The template's text from inside one of its words, where `word` is that word's end, to its
    end, when the fragment is an instance of it; else None."""
    def part(literal: str, field: str | None) -> str:
        return templates.escape(literal) + ("{%s}" % field if field else "")

    parts = templates.parse(template)
    for k, (literal, field) in enumerate(parts):
        at = literal.find(word)
        while at > 0:
            end = at + len(word)
            if literal[at - 1].isalpha() and (end == len(literal) or not literal[end].isalnum()):
                tail = part(literal[at:], field) + "".join(part(*p) for p in parts[k + 1:])
                # compiled without to_regex's cache: tails are many and each is tried once
                if templates.to_regex.__wrapped__(tail).fullmatch(fragment):
                    return tail
            at = literal.find(word, at + 1)
    return None


_PRINTED_WARNING = re.compile(r"(\w+Warning): *$")


def _other_warning_class(entry: Entry, text: str, start: int) -> bool:
    """The paste prints the message as one warning class (`UserWarning: head_first is deprecated`)
    and every harvested site of it warns or raises under another: the text comes from a copy of the
    code that is not the harvested one (SGLang's vendored FLA raises DeprecationWarning where FLA
    itself warns), so the bare site would name the wrong package."""
    if not (classes := entry.warning_classes):
        return False
    printed = _PRINTED_WARNING.search(text, text.rfind("\n", 0, start) + 1, start)
    return printed is not None and printed.group(1) not in classes


def _site_ref(site) -> SiteRef:
    return SiteRef(site.id, site.package, site.path, tuple(site.versions), site.kind, site.function or "",
                   site.error_class or "")


def _tail(path: str) -> str:
    """A repository path's last two parts, as an installed package's path ends too
    (src/transformers/modeling_utils.py -> transformers/modeling_utils.py)."""
    return "/".join(path.rsplit("/", 2)[-2:])


def _params(m: re.Match[str]) -> dict[str, str]:
    """A match's parameter values. A placeholder repeated in the template is captured once, and
    every group of a template's pattern takes part in any match, so none is ever None."""
    return m.groupdict()
