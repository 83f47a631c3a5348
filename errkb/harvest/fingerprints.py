"""Fingerprints of upstream source lines, so validation can spot copied code without
shipping the code: a short hash of each non-trivial line near a harvested site."""

from __future__ import annotations

import hashlib
import re

WINDOW = 12  # lines either side of a site
MIN_CODE_CHARS = 40  # shorter lines are idioms anyone writes (`with torch.no_grad():`)


def normalise(line: str) -> str | None:
    """The comparable form of a line, or None when it is too slight to count as code."""
    text = re.sub(r"\s+", " ", line.strip())
    if len(text) < MIN_CODE_CHARS or text.startswith(("#", "//", "*", "/*")):
        return None
    return text


def line_hash(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=6).hexdigest()


def fingerprint_lines(files: dict[str, str], sites: set[tuple[str, int]]) -> set[str]:
    """Hashes of the lines within WINDOW of every (path, line) in `sites`."""
    wanted: dict[str, set[int]] = {}
    for path, line in sites:
        wanted.setdefault(path, set()).update(range(line - WINDOW, line + WINDOW + 1))
    out: set[str] = set()
    for path, numbers in wanted.items():
        lines = files.get(path, "").splitlines()
        for n in numbers:
            if 1 <= n <= len(lines) and (norm := normalise(lines[n - 1])):
                out.add(line_hash(norm))
    return out
