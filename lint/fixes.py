"""Applying autofixes: `errkb lint --fix` / `--diff` and the editor server's code actions.

A fix (results.Fix) is a list of (start, end, replacement) edits in character offsets of the
decoded source, offered only for a record whose verification status is `confirmed`. Safe fixes
are applied by --fix; unsafe ones (they change what the code computes) also need
--unsafe-fixes. Fixing runs in passes: apply every fix that does not overlap another, lint the
new text, repeat until nothing is left to fix (at most MAX_PASSES). A pass whose result no
longer parses is thrown away. A file is written only if its bytes are still the ones that were
read. Light on purpose (no libcst): the driver imports it.
"""

from __future__ import annotations

import difflib
import io
import os
import re
import tokenize
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from errkb.lint.results import Finding, Fix

MAX_PASSES = 10
_NEWLINE = re.compile(r"\r\n|\r|\n")

# source bytes -> (findings, why the file was skipped or None)
LintBytes = Callable[[bytes], tuple[list[Finding], "str | None"]]


def decode_source(source: bytes) -> tuple[str, str]:
    """(text, encoding) as Python reads the file: its coding cookie or BOM, else UTF-8."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
    except SyntaxError:
        encoding = "utf-8"
    return source.decode(encoding), encoding


def line_starts(text: str) -> list[int]:
    """Offset of each line's first character (lines end at \\n, \\r\\n or \\r, as Python's)."""
    return [0, *(m.end() for m in _NEWLINE.finditer(text))]


def applicable(fix: Fix | None, unsafe: bool) -> bool:
    return fix is not None and (fix.safe or unsafe)


def _clash(a: tuple[int, int, str], b: tuple[int, int, str]) -> bool:
    """Two edits whose order or extent is ambiguous (identical edits do not clash)."""
    return a != b and (a[0] == b[0] or (a[0] < b[1] and b[0] < a[1]))


def apply(text: str, fixes: list[Fix]) -> tuple[str, int]:
    """(new text, number of fixes applied): every fix whose edits clash with none of an
    earlier fix's; the rest wait for the next pass. An edit two fixes share is made once."""
    taken: list[tuple[int, int, str]] = []
    applied = 0
    for fix in sorted(fixes, key=lambda f: (min((e[0] for e in f.edits), default=0), f.title)):
        if any(_clash(e, t) for e in fix.edits for t in taken):
            continue
        taken.extend(e for e in fix.edits if e not in taken)
        applied += 1
    for start, end, replacement in sorted(taken, reverse=True):
        text = text[:start] + replacement + text[end:]
    return text, applied


@dataclass
class FileFix:
    path: str  # as reported
    before: bytes
    after: bytes
    fixed: int = 0  # fixes applied
    findings: list[Finding] = field(default_factory=list)  # what is left after fixing
    problem: str | None = None  # why (part of) the fixing was given up


def fix_source(path: str, source: bytes, lint: LintBytes, unsafe: bool) -> FileFix:
    """Fix one file's bytes in passes; its findings at the end are the ones still left."""
    findings, skipped = lint(source)
    out = FileFix(path, source, source, findings=findings, problem=skipped)
    if skipped:
        return out
    for _ in range(MAX_PASSES):
        fixes = [f.fix for f in out.findings if applicable(f.fix, unsafe)]
        if not fixes:
            break
        text, encoding = decode_source(out.after)
        new_text, applied = apply(text, fixes)
        new = new_text.encode(encoding)
        if new == out.after:
            break
        findings, skipped = lint(new)
        if skipped:  # a fix must never break a file: keep the last good text
            out.problem = f"a fix would leave the file unlintable ({skipped}); that pass was not applied"
            break
        out.after, out.findings, out.fixed = new, findings, out.fixed + applied
    return out


def unified_diff(path: str, before: bytes, after: bytes) -> str:
    old, new = decode_source(before)[0], decode_source(after)[0]
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                 f"a/{path}", f"b/{path}")
    return "".join(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n"
                   for line in lines)


def write_if_unchanged(path: str, before: bytes, after: bytes) -> str | None:
    """Replace the file's content (atomically, keeping its mode) if it still holds `before`;
    otherwise (or on an error) say why it was left alone."""
    target = os.path.realpath(path)
    try:
        with open(target, "rb") as fh:
            now = fh.read()
        if now != before:
            return "it changed since it was read; not written"
        mode = os.stat(target).st_mode & 0o7777
        tmp = f"{target}.errkb-fix-{os.getpid()}.tmp"
        with open(tmp, "wb") as fh:
            fh.write(after)
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except OSError as exc:
        return f"cannot write: {exc.strerror or exc}"
    return None


def fixable_paths(findings: list[Finding], unsafe: bool) -> list[str]:
    return sorted({f.path for f in findings if applicable(f.fix, unsafe)})


def hidden_unsafe(findings: list[Finding]) -> int:
    """Findings whose only fix is unsafe (shown as a hint when --unsafe-fixes is off)."""
    return sum(1 for f in findings if f.fix is not None and not f.fix.safe)


def real_paths(paths: list[Path], cfg) -> dict[str, str]:
    """Reported path -> the path to open, for the files a run over `paths` lints (the reported
    name of a file given by absolute path is relative to the config root)."""
    from errkb.lint.runner import discover

    files, _ = discover(paths, cfg)
    return {rel if os.path.isabs(p) else p: p for p, rel in files}
