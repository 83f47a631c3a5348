"""Message templates: `str.format` syntax with named placeholders only.

A template such as ``"head_dim {head_dim} is not supported on sm{arch}"`` is the one stored
form of a message; its regular expression is derived here, never stored.
"""

from __future__ import annotations

import re
import string
from functools import lru_cache

_FORMATTER = string.Formatter()
# A parameter value is at most one line and a bounded length: this keeps every derived
# pattern free of catastrophic backtracking on long pasted logs.
_VALUE = r".{0,2048}?"
_SPACE = re.compile(r"\s+")
QUOTES = "`'\""
_ANY_QUOTE = "[`'\"]?+"  # possessive: a quote there is taken and never given back
MAX_VALUE_STEPS = 512  # characters or blank runs in one value of a search pattern


class TemplateError(ValueError):
    """A template that is not a valid errkb template."""


def parse(template: str) -> list[tuple[str, str | None]]:
    """Split a template into (literal, placeholder-or-None) pairs."""
    try:
        parts = list(_FORMATTER.parse(template))
    except ValueError as exc:
        raise TemplateError(f"bad template {template!r}: {exc}") from None
    out: list[tuple[str, str | None]] = []
    pending = ""  # escaped braces split the literal text: join it back up
    for literal, field, _spec, _conv in parts:
        if field is not None and not field.isidentifier():
            raise TemplateError(f"placeholder {{{field}}} in {template!r} is not a plain name")
        pending += literal
        if field is not None:
            out.append((pending, field))
            pending = ""
    if pending:
        out.append((pending, None))
    return out


def placeholders(template: str) -> list[str]:
    """Placeholder names in order of first appearance."""
    seen: list[str] = []
    for _literal, field in parse(template):
        if field and field not in seen:
            seen.append(field)
    return seen


def placeholder_name(source: str) -> str:
    """A readable placeholder name for the code that prints a value: `q.shape[-1]` -> `q_shape_1`."""
    name = re.sub(r"_+", "_", re.sub(r"\W+", "_", source).strip("_").lower())
    if not name:
        return "value"
    if name[0].isdigit():
        name = "v_" + name
    return name[:40].rstrip("_")


def literal_text(template: str) -> str:
    """The template with its placeholders removed: what any instance surely contains."""
    return "".join(literal for literal, _ in parse(template))


def escape(text: str) -> str:
    """Make arbitrary text safe to use as a template literal."""
    return text.replace("{", "{{").replace("}", "}}")


def _literal_regex(literal: str, possessive: bool = False) -> str:
    # Whitespace drifts when messages are wrapped or logged: any run matches any run.
    # Possessive runs (search patterns) never give characters back, so long runs of
    # blanks cannot multiply the work.
    return (r"\s++" if possessive else r"\s+").join(_chunk_regex(chunk) for chunk in _SPACE.split(literal))


def _chunk_regex(chunk: str) -> str:
    """A literal chunk, where a quote may be retyped as another kind or lost: a backtick quoted
    name comes back in single quotes when a user retypes it, and without any once an issue
    tracker's Markdown has rendered it as code."""
    return "".join(_ANY_QUOTE if c in QUOTES else re.escape(c) for c in chunk)


@lru_cache(maxsize=None)
def to_regex(template: str) -> re.Pattern[str]:
    """The exact pattern, one named group per placeholder: use it with `fullmatch`."""
    pieces: list[str] = []
    used: set[str] = set()
    for literal, field in parse(template):
        if literal:
            pieces.append(_literal_regex(literal))
        if field is not None:
            pieces.append(_VALUE if field in used else f"(?P<{field}>{_VALUE})")
            used.add(field)
    return re.compile("".join(pieces))


def _stop(literal: str, glued: bool = False) -> str:
    """Lookahead body that is true where `literal` starts (after optional blanks). A `glued`
    literal follows its value with no blank in the template (`{prefix}No valid ...`): the value
    may end in blanks of its own (`[cudnn_frontend] Error: `), so it stops at the literal itself."""
    core = literal.strip()
    if not core:
        return r"\s"
    return ("" if glued else r"\s*+") + _literal_regex(core, possessive=True)


@lru_cache(maxsize=None)
def search_regex(template: str) -> re.Pattern[str]:
    """search_source(template), compiled."""
    return re.compile(search_source(template))


def search_source(template: str) -> str:
    """The source of a pattern to find the message inside long text without backtracking blow-ups
    (errkb/redos.py certifies it from the source alone, so validation need not compile it).

    A value is taken greedily and possessively, a blank run or one character at a time, and
    stops before the literal that follows it or a repeat of the literal that precedes it;
    so each value is scanned once, and a text full of near-misses costs little. A leading
    value (or run of values side by side) is one token; a trailing value runs to the end of the line. Values hold at most
    MAX_VALUE_STEPS steps (the trailing one 1024 characters); longer ones are left to fuzzy matching.
    In a run of placeholders side by side only the first splits lazily and the middle ones stay
    empty, so no run multiplies the retries (errkb/redos.py certifies every derived pattern).
    """
    parts = parse(template)
    pieces: list[str] = []
    used: set[str] = set()
    for i, (literal, field) in enumerate(parts):
        if literal:
            lit = _literal_regex(literal, possessive=True)
            if i == 0 and re.match(r"\w", literal):
                lit = r"(?<!\w)" + lit  # "out tensor ..." must not match inside "dout tensor ..."
            if i == len(parts) - 1 and field is None and re.search(r"\w$", literal):
                lit += r"(?!\w)"
            pieces.append(lit)
        if field is None:
            continue
        following = parts[i + 1][0] if i + 1 < len(parts) else None
        anchor = r"(?<!\S)" if i == 0 else ""  # a leading value starts a token
        if following is None:
            body = r"[^\n]{0,1024}"
        elif not following and i > 0 and not literal:  # third of a run side by side: empty
            body = ""  # (so retries never multiply: see errkb/redos.py)
        elif not following:  # two placeholders side by side: split lazily
            body = anchor + r"\S{0,3}?"
        elif not any(lit for lit, _ in parts[:i + 1]):  # leading values: one token in all
            body = anchor + rf"(?:(?!{_stop(following)})\S){{1,{MAX_VALUE_STEPS}}}+"
        else:
            stops = _stop(following, glued=not following[0].isspace()) + (f"|{_stop(literal)}" if literal.strip() else "")
            body = rf"(?:(?!{stops})(?:\s++|[^\s])){{0,{MAX_VALUE_STEPS}}}+"
        pieces.append(f"(?:{body})" if field in used else f"(?P<{field}>{body})")
        used.add(field)
    return "".join(pieces)


class Finder:
    """`search_regex(template).search(text)`, the same match, found faster.

    Python's regex engine tries a pattern at every position of the text, and a pattern that
    opens with a lookbehind or a value has no literal prefix for it to skip ahead with. Every
    match holds the template's first literal word (its lead), and the match can only start at
    one place before each occurrence of it: right there, at the blank run before it, or at the
    start of the token before it. So the finder looks the lead up with str.find and tries the
    pattern only at those starts. Texts where that could cost more (many occurrences, long
    blank runs) go to the plain search, so the worst case is never worse than the pattern's.
    """

    MAX_LEADS = 32
    MAX_BLANKS = 64

    def __init__(self, template: str) -> None:
        self.pattern = search_regex(template)
        parts = parse(template)
        self.lead = ""
        self.after_value = False
        first_literal = parts[0][0] if parts else ""
        if not first_literal and parts[0][1] is not None and len(parts) > 1:
            first_literal, self.after_value = parts[1][0], True  # a leading value: one token
        chunks = [c for c in _SPACE.split(first_literal) if c]
        self.at_lead = False  # whether a match starts right at its lead, as most do
        self.quotes_before = 0  # quotes the lead starts with, which a paste may have retyped or lost
        if chunks:
            self.blank_first = first_literal[0].isspace()
            self.at_lead = not self.after_value and not self.blank_first
            lead = chunks[0]
            if any(c in QUOTES for c in lead):  # look up the text before its first quote instead
                self.quotes_before = len(lead) - len(lead.lstrip(QUOTES))
                lead = re.split(f"[{re.escape(QUOTES)}]", lead[self.quotes_before:])[0]
                if not self.at_lead:  # the start would move with the quotes: no lead
                    lead = ""
            self.lead = lead

    def search(self, text: str) -> re.Match[str] | None:
        if not self.lead:
            return self.pattern.search(text)
        lead = self.lead
        q = text.find(lead)
        if q < 0:
            return None
        if self.at_lead:  # the match starts at an occurrence of the lead: try each in turn
            match = self.pattern.match
            for _ in range(self.MAX_LEADS):
                if m := match(text, self._before_quotes(text, q)):
                    return m
                q = text.find(lead, q + 1)
                if q < 0:
                    return None
            return self.pattern.search(text, q)  # many occurrences: the engine scans the rest
        if text.count(lead) > self.MAX_LEADS:
            return self.pattern.search(text)
        tried = -1
        while q >= 0:
            start = self._start(text, q)
            if start is None:
                return self.pattern.search(text)
            if start >= 0 and start != tried:
                m = self.pattern.match(text, start)
                if m:
                    return m
                tried = start
            q = text.find(self.lead, q + 1)
        return None

    def _before_quotes(self, text: str, q: int) -> int:
        """Where a match whose lead (after its leading quotes) is at q starts: before the quotes
        the paste kept there, of whatever kind."""
        for _ in range(self.quotes_before):
            if q > 0 and text[q - 1] in QUOTES:
                q -= 1
        return q

    def _start(self, text: str, q: int) -> int | None:
        """Where a match whose lead is at q must start; -1 where none can, None when unsure."""
        blank = q
        while blank > 0 and text[blank - 1].isspace():
            blank -= 1
            if q - blank > self.MAX_BLANKS:
                return None
        if not self.after_value:
            if not self.blank_first:
                return q
            return blank if blank < q else -1
        # the value is one token of at most MAX_VALUE_STEPS characters, ending where the blanks start
        before = text[max(0, blank - MAX_VALUE_STEPS - 1):blank].rsplit(None, 1)
        size = len(before[-1]) if before and not text[blank - 1:blank].isspace() else 0
        if size > MAX_VALUE_STEPS:
            return -1
        return blank - size if size else -1


def fullmatch(template: str, message: str) -> dict[str, str] | None:
    """Parameter values when `message` is an instance of `template`, else None."""
    m = to_regex(template).fullmatch(message.strip())
    return None if m is None else m.groupdict()


def render(template: str, values: dict[str, object]) -> str:
    return template.format(**values)
