"""The byte-level prefilter: a file can only match a rule when it holds, for one of the rule's
targets, both the function's name and the name of its module (every way of importing it
spells both). Most files fail it, and they are never parsed."""

from __future__ import annotations

from typing import Iterable

Tokens = tuple[tuple[bytes, ...], ...]

_ANCHORS: dict[Tokens, tuple[tuple[bytes, Tokens], ...]] = {}


def tokens_of(groups_per_rule: Iterable[Tokens]) -> Tokens:
    """All rules' token groups, deduplicated and in a stable order."""
    return tuple(sorted({g for groups in groups_per_rule for g in groups}))


def may_match(source: bytes, tokens: Tokens) -> bool:
    """Some group's tokens all occur in the file. The groups are filed under the 10-byte prefix
    of their first token: one scan per prefix (most files have none), then only the groups
    whose prefix is there."""
    anchors = _ANCHORS.get(tokens)
    if anchors is None:
        by: dict[bytes, list] = {}
        for g in tokens:
            by.setdefault(g[0][:10], []).append(g)
        anchors = _ANCHORS[tokens] = tuple((a, tuple(gs)) for a, gs in sorted(by.items()))
    seen: dict[bytes, bool] = {}  # a token in several groups is looked for once
    for anchor, groups in anchors:
        if anchor in source:
            for group in groups:
                for t in group:
                    hit = seen.get(t)
                    if hit is None:
                        hit = seen[t] = t in source
                    if not hit:
                        break
                else:
                    return True
    return False


def groups_found(source: bytes, tokens: Tokens) -> set[tuple[bytes, ...]]:
    """The groups of `tokens` whose tokens all occur in the file, each token looked for once:
    the per-rule prefilter of every rule at the cost of one."""
    seen: dict[bytes, bool] = {}
    found = set()
    for group in tokens:
        for t in group:
            hit = seen.get(t)
            if hit is None:
                hit = seen[t] = t in source
            if not hit:
                break
        else:
            found.add(group)
    return found
