"""The byte-level prefilter: a file can only match a rule when it holds, for one of the rule's
targets, both the function's name and the name of its module (every way of importing it
spells both). Most files fail it, and they are never parsed."""

from __future__ import annotations

from typing import Iterable

Tokens = tuple[tuple[bytes, ...], ...]

_ANCHORS: dict[Tokens, tuple[bytes, ...]] = {}


def tokens_of(groups_per_rule: Iterable[Tokens]) -> Tokens:
    """All rules' token groups, deduplicated and in a stable order."""
    return tuple(sorted({g for groups in groups_per_rule for g in groups}))


def may_match(source: bytes, tokens: Tokens) -> bool:
    """Some group's tokens all occur in the file. A few scans for the 10-byte prefixes of the
    names first (most files have none), then the whole groups."""
    anchors = _ANCHORS.get(tokens)
    if anchors is None:
        anchors = _ANCHORS[tokens] = tuple(sorted({g[0][:10] for g in tokens}))
    if not any(a in source for a in anchors):
        return False
    return any(all(t in source for t in group) for group in tokens)
