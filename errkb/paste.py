"""Clean up what people paste: ANSI colours, log prefixes, Windows paths, traceback frames.

The cleaned text keeps a map back to the original, so a match can say which span of the
user's own text it matched.

Three scans do most of the work: stripping log prefixes, finding traceback frames, and
picking the message lines. The `py_*` functions here, built on the regular expressions below,
are their reference and specification. `errkb._paste` (C, built with the package when a
compiler is there) gives the same answers at a fraction of the cost: the regex engine tries
every prefix pattern at every line, and that was a third of what matching a paste cost.
`ERRKB_PURE_PYTHON=1` forces the reference.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_right
from functools import lru_cache
from dataclasses import dataclass, field

try:
    if os.environ.get("ERRKB_PURE_PYTHON") == "1":
        raise ImportError("ERRKB_PURE_PYTHON=1")
    from errkb import _paste as compiled
except ImportError:
    compiled = None

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")
_BLANK = r"[^\S\n]"  # a blank that is not a line break: a prefix never runs into the next line
# Prefixes loggers and launchers put before the message, stripped repeatedly from each line.
_PREFIXES = (
    rf"\(\w+ pid=\d+\){_BLANK}*",  # Ray / vLLM workers: (EngineCore_DP0 pid=1234)
    rf"\[rank\d+\]:{_BLANK}*",  # torchrun: [rank3]:
    rf"(?:ERROR|WARNING|WARN|INFO|DEBUG|CRITICAL){_BLANK}+\d\d-\d\d{_BLANK}+\d\d:\d\d:\d\d(?:\.\d+)?"
    rf"{_BLANK}+\[?[\w.-]+(?::\d+)?\]{_BLANK}*",  # vLLM: ERROR 01-11 13:09:40 engine.py:366]
    rf"\[\d{{4}}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:{_BLANK}+[\w ]+?)?\]{_BLANK}*",  # SGLang: [2025-01-01 12:00:00 TP0]
    rf"\d{{4}}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?{_BLANK}*(?:[-|]{_BLANK}*)?"
    rf"(?:(?:ERROR|WARNING|INFO|DEBUG){_BLANK}*(?:[-|:]{_BLANK}*)?)?",
    rf"(?:ERROR|WARNING|CRITICAL){_BLANK}*[:|-]{_BLANK}*",
    rf"\d+{_BLANK}*\|{_BLANK}*",  # docker compose: "12 | "
)
# The run of prefixes at the start of every line, found for the whole text in one pass. Each
# pattern below leads with the line break before the line (the text gets one in front), not
# with ^: the regex engine skips straight to a literal lead, but tries ^ at every character.
# The lookahead (the first characters the prefixes can start with) turns most lines away at once.
_PREFIX_RUN = re.compile("\n(?=[(\\[\\dEWIDC])((?:" + "|".join(f"(?:{p})" for p in _PREFIXES) + ")+)")
_INFO_LEVEL = re.compile(r"\b(?:INFO|DEBUG)\b")
_FRAME = re.compile(r'File "([^"]+)", line (\d{1,9})(?!\d)')  # longer numbers are no file's lines
# Lines that are never part of a message: traceback frames with the source line under them
# (indented deeper than the frame: code run by exec() has none, and the exception line under
# it, as pip indents a build backend's output, is a message),
# and the lines Python prints around tracebacks. Each match is the line break before such a
# line and the line, up to its own line break.
_NOT_MESSAGE = re.compile(r'\n([ \t]*)(?:File "[^"\n]*", line \d+[^\n]*(?:\n\1[ \t]+[^\n]*)?'
                          r"|(?:Traceback \(most recent call last\)"
                          r"|During handling of the above exception, another exception occurred"
                          r"|The above exception was the direct cause of the following exception):[ \t]*)(?=\n)")
_STRAY_ONE = re.compile(r"Warning: (1)(?=[A-Z][a-z])")
_CPP_FROM = re.compile(r"Exception raised from \S+ at ([^\s:]+):(\d{1,9})(?!\d)")
# Which package a file path in a traceback belongs to.
# First hit wins, so vendored copies (sglang/.../flash_attn/cute) count for their vendor.
_PACKAGE_HINTS = (
    ("sgl_kernel/", "sglang-kernel"), ("sglang/", "sglang"), ("vllm/", "vllm"), ("flashinfer/", "flashinfer-python"),
    ("flash_attn/cute/", "flash-attn-4"), ("flash_attn", "flash-attn"), ("hopper/", "flash-attn"),
    ("aten/src/ATen/native/transformers", "pytorch-aten"), ("/xformers/", "xformers"), ("/transformers/", "transformers"),
    ("/diffusers/", "diffusers"), ("/triton/", "triton"), ("torch/", "torch"),
)


# A cut: where each character of a text with some spans cut out came from, kept as the start
# of every run left whole, in the new text and in the old (a few numbers per cut rather than
# one per character, since most pastes are matched without ever asking).
Cut = tuple[list[int], list[int]]


def cut_spans(text: str, spans: list[tuple[int, int]], shift: int = 0) -> tuple[str, Cut | None]:
    """`text` without the given (start, end) spans, in order, and the cut (None when nothing
    was cut). The spans may be offsets into a text `shift` characters longer."""
    if not spans:
        return text, None
    new_starts, old_starts = [0], [0]
    kept, pos, new = [], 0, 0
    for start, end in spans:
        start, end = start - shift, end - shift
        kept.append(text[pos:start])
        new += start - pos
        new_starts.append(new)
        old_starts.append(end)
        pos = end
    kept.append(text[pos:])
    return "".join(kept), (new_starts, old_starts)


# ------------------------------------------------------------------ the reference scans

def py_strip_prefixes(plain: str) -> tuple[str, Cut | None, list[int]]:
    """`plain` without its log prefixes, the cut (None when nothing was cut), and the numbers
    of the lines logged at INFO or DEBUG."""
    prefixes = [m.span(1) for m in _PREFIX_RUN.finditer("\n" + plain)]  # offsets one ahead
    text, cut = cut_spans(plain, prefixes, shift=1)
    info_lines: list[int] = []
    line, counted = 0, 0
    for start, end in prefixes:
        prefix = plain[start - 1:end - 1]
        if ("INFO" in prefix or "DEBUG" in prefix) and _INFO_LEVEL.search(prefix):
            line += plain.count("\n", counted, start - 1)
            counted = start - 1
            info_lines.append(line)
    return text, cut, info_lines


def py_find_frames(text: str) -> list[tuple[str, int]]:
    """(path, line) of every Python traceback frame."""
    return [(path, int(number)) for path, number in _FRAME.findall(text)]


def py_message_text(text: str, skip: frozenset[int]) -> str:
    """The message lines of `text`, each ending in a line break; lines numbered in `skip` are
    left out first (as if they had never been there)."""
    if skip:
        text = "\n".join(line for i, line in enumerate(text.split("\n")) if i not in skip)
    return _NOT_MESSAGE.sub("", "\n" + text + "\n")[1:]


def py_message_lines(text: str, skip: frozenset[int]) -> list[tuple[int, str]]:
    """(offset in text, line) for every non-blank line of `py_message_text(text, skip)`."""
    kept, pos = [], 0
    for i, line in enumerate(text.split("\n")):
        if i not in skip:
            kept.append((pos, line))
        pos += len(line) + 1
    joined = "\n" + "\n".join(line for _, line in kept) + "\n"
    starts, pos = [], 0  # where each kept line's leading line break is in `joined`
    for _, line in kept:
        starts.append(pos)
        pos += len(line) + 1
    dropped = set()
    for m in _NOT_MESSAGE.finditer(joined):
        first, last = bisect_right(starts, m.start()) - 1, bisect_right(starts, m.end() - 1) - 1
        dropped.update(range(first, last + 1))
    return [(offset, line) for k, (offset, line) in enumerate(kept) if k not in dropped and line.strip()]


if compiled is not None:
    strip_prefixes, find_frames = compiled.strip_prefixes, compiled.find_frames
    message_text, message_lines = compiled.message_text, compiled.message_lines
else:
    strip_prefixes, find_frames = py_strip_prefixes, py_find_frames
    message_text, message_lines = py_message_text, py_message_lines


# ------------------------------------------------------------------ the paste

@dataclass(slots=True)
class Paste:
    original: str
    text: str  # cleaned: no colours, no log prefixes, forward slashes
    cuts: tuple[Cut, ...]  # cleaned text -> ... -> original, one per step that cut something
    frames: list[tuple[str, int]] = field(default_factory=list)
    packages: frozenset[str] = frozenset()
    info_lines: frozenset[int] = frozenset()  # lines logged at INFO/DEBUG level
    project: frozenset[str] = frozenset()  # packages the user said the paste comes from (errkb.projects)

    @property
    def message_text(self) -> str:
        """The lines that can hold an error or warning message, each ending in a line break:
        not traceback frames or the source lines under them (those are evidence), not the
        lines Python prints around a traceback, not INFO/DEBUG log lines (noise)."""
        return message_text(self.text, self.info_lines)

    def message_lines(self) -> list[tuple[int, str]]:
        """(offset in text, line) for every non-blank line of the message text."""
        return message_lines(self.text, self.info_lines)

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Original offsets of cleaned text[start:end]."""
        last = len(self.text) - 1
        if last < 0:
            return (0, 0)
        first = start if start < last else last
        final = end - 1 if end > 1 else 0
        if final > last:
            final = last
        for new, old in self.cuts:
            k, m = bisect_right(new, first) - 1, bisect_right(new, final) - 1
            first, final = old[k] + first - new[k], old[m] + final - new[m]
        return first, final + 1

    def lines(self) -> list[tuple[int, str]]:
        """(offset in text, line) for every non-blank cleaned line."""
        out, pos = [], 0
        for line in self.text.split("\n"):
            if line.strip():
                out.append((pos, line))
            pos += len(line) + 1
        return out


def message_text_with_info(paste: Paste) -> str:
    """The message text with the INFO/DEBUG lines put back (for a paste whose other lines matched nothing)."""
    return message_text(paste.text, frozenset())


def parse(original: str) -> Paste:
    # 1. drop ANSI sequences (rare: most pastes skip this step)
    plain, without_ansi = original, None
    if "\x1b" in original:
        plain, without_ansi = cut_spans(original, [m.span() for m in _ANSI.finditer(original)])
    # typographic quotes from an editor, a chat client or an input method (no harvested message has
    # any): back to the ASCII quotes programs print, one character for one, so spans stay put
    plain = plain.replace("\r", " ").replace("\\", "/")
    if any(quote in plain for quote in _TYPOGRAPHIC_QUOTES):  # rare: most pastes skip the translation
        plain = plain.translate(_ASCII_QUOTES)
    # 1b. drop the stray "1" that some Windows torch builds print before a warning's text
    # ("UserWarning: 1Torch was not compiled with flash attention."): the message starts after it
    without_one = None
    if "Warning: 1" in plain:
        plain, without_one = cut_spans(plain, [m.span(1) for m in _STRAY_ONE.finditer(plain)])
    # 2. drop log prefixes, noting INFO/DEBUG lines; 3. find the frames and their packages
    text, without_prefixes, info_lines = strip_prefixes(plain)
    frames = find_frames(text)
    if "Exception raised from" in text:
        frames += [(path, int(number)) for path, number in _CPP_FROM.findall(text)]
    packages = _NOTHING
    if frames:
        found = set()
        for path, _ in frames:
            if pkg := _package_of(path):
                found.add(pkg)
        packages = frozenset(found)
    cuts = tuple(cut for cut in (without_prefixes, without_one, without_ansi) if cut)
    return Paste(original, text, cuts, frames, packages, frozenset(info_lines))


_NOTHING: frozenset[str] = frozenset()
_TYPOGRAPHIC_QUOTES = "\u2018\u2019\u201c\u201d"
_ASCII_QUOTES = str.maketrans(_TYPOGRAPHIC_QUOTES, "''\"\"")


@lru_cache(maxsize=4096)  # the same site-packages paths recur in paste after paste
def _package_of(path: str) -> str | None:
    for hint, pkg in _PACKAGE_HINTS:
        if hint in path:
            return pkg
    return None
