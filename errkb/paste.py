"""Clean up what people paste: ANSI colours, log prefixes, Windows paths, traceback frames.

The cleaned text keeps a map back to the original, so a match can say which span of the
user's own text it matched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")
# Prefixes loggers and launchers put before the message, stripped repeatedly from each line.
_PREFIXES = [re.compile(p) for p in (
    r"\(\w+ pid=\d+\)\s*",  # Ray / vLLM workers: (EngineCore_DP0 pid=1234)
    r"\[rank\d+\]:\s*",  # torchrun: [rank3]:
    r"(?:ERROR|WARNING|WARN|INFO|DEBUG|CRITICAL)\s+\d\d-\d\d\s+\d\d:\d\d:\d\d(?:\.\d+)?\s+\[?[\w.-]+(?::\d+)?\]\s*",  # vLLM
    r"\[\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:\s+[\w ]+?)?\]\s*",  # SGLang: [2025-01-01 12:00:00 TP0]
    r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?\s*(?:[-|]\s*)?(?:(?:ERROR|WARNING|INFO|DEBUG)\s*(?:[-|:]\s*)?)?",
    r"(?:ERROR|WARNING|CRITICAL)\s*[:|-]\s*",
    r"\d+\s*\|\s*",  # docker compose: "12 | "
)]
# Any of them at the start of a line: most lines carry none, and one test settles that.
_ANY_PREFIX = re.compile("|".join(f"(?:{p.pattern})" for p in _PREFIXES))
_INFO_LEVEL = re.compile(r"\b(?:INFO|DEBUG)\b")
_FRAME = re.compile(r'File "([^"]+)", line (\d+)')
_FRAME_AND_CODE = re.compile(r'^[ \t]*File "[^"\n]*", line \d+[^\n]*\n(?:[ \t]+[^\n]*\n)?', re.M)
_CPP_FROM = re.compile(r"Exception raised from \S+ at ([^\s:]+):(\d+)")
# Which package a file path in a traceback belongs to.
# First hit wins, so vendored copies (sglang/.../flash_attn/cute) count for their vendor.
_PACKAGE_HINTS = (
    ("sgl_kernel/", "sglang-kernel"), ("sglang/", "sglang"), ("vllm/", "vllm"), ("flashinfer/", "flashinfer-python"),
    ("flash_attn/cute/", "flash-attn-4"), ("flash_attn", "flash-attn"), ("hopper/", "flash-attn"),
    ("aten/src/ATen/native/transformers", "pytorch-aten"), ("torch/", "torch"),
)


@dataclass
class Paste:
    original: str
    text: str  # cleaned: no colours, no log prefixes, forward slashes
    offsets: list[int]  # offsets[i] = index in `original` of text[i]
    frames: list[tuple[str, int]] = field(default_factory=list)
    packages: set[str] = field(default_factory=set)
    info_lines: set[int] = field(default_factory=set)  # lines logged at INFO/DEBUG level

    @property
    def message_text(self) -> str:
        """The lines that can hold an error or warning message: not traceback frames or the
        source lines under them (those are evidence), not INFO/DEBUG log lines (noise)."""
        kept = [line for i, line in enumerate(self.text.split("\n")) if i not in self.info_lines]
        return _FRAME_AND_CODE.sub("", "\n".join(kept) + "\n")

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Original offsets of cleaned text[start:end]."""
        if not self.offsets:
            return (0, 0)
        last = len(self.offsets) - 1
        return (self.offsets[min(start, last)], self.offsets[min(max(end - 1, 0), last)] + 1)

    def lines(self) -> list[tuple[int, str]]:
        """(offset in text, line) for every non-blank cleaned line."""
        out, pos = [], 0
        for line in self.text.split("\n"):
            if line.strip():
                out.append((pos, line))
            pos += len(line) + 1
        return out


def _strip_prefixes(line: str) -> int:
    """How many leading characters of `line` are logging noise."""
    if not _ANY_PREFIX.match(line):
        return 0
    pos = 0
    changed = True
    while changed:
        changed = False
        for pattern in _PREFIXES:
            m = pattern.match(line, pos)
            if m and m.end() > pos:
                pos, changed = m.end(), True
    return pos


def parse(original: str) -> Paste:
    # 1. drop ANSI sequences, remembering where every kept character came from
    kept: list[str] = []
    offsets: list[int] = []
    pos = 0
    for m in _ANSI.finditer(original):
        kept.append(original[pos:m.start()])
        offsets.extend(range(pos, m.start()))
        pos = m.end()
    kept.append(original[pos:])
    offsets.extend(range(pos, len(original)))
    plain = "".join(kept).replace("\r", " ").replace("\\", "/")

    # 2. drop log prefixes line by line
    text_parts: list[str] = []
    text_offsets: list[int] = []
    info_lines: set[int] = set()
    start = 0
    for number, line in enumerate(plain.split("\n")):
        skip = _strip_prefixes(line)
        if _INFO_LEVEL.search(line[:skip]):
            info_lines.add(number)
        text_parts.append(line[skip:])
        text_offsets.extend(offsets[start + skip:start + len(line)])
        if start + len(line) < len(offsets):
            text_offsets.append(offsets[start + len(line)])  # the newline
        start += len(line) + 1
    text = "\n".join(text_parts)
    text_offsets = text_offsets[:len(text)]

    frames = [(m.group(1), int(m.group(2))) for m in _FRAME.finditer(text)]
    frames += [(m.group(1), int(m.group(2))) for m in _CPP_FROM.finditer(text)]
    packages = {pkg for path, _ in frames if (pkg := _package_of(path))}
    return Paste(original, text, text_offsets, frames, packages, info_lines)


def _package_of(path: str) -> str | None:
    for hint, pkg in _PACKAGE_HINTS:
        if hint in path:
            return pkg
    return None
