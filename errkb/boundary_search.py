"""Find the first and last release that raise a message, by bisecting over every release.

The harvested releases say where a message stands in a few releases; the releases between
and around them are checked here, only as many as a bisection needs. A check answers True
(the release raises it), False (it does not) or None (its files could not be read), and a
boundary counts as found only when the release beside it was read and does not raise it.
Pure logic: reading a release is the caller's `probe`, so tests run it on a fake.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

Check = bool | None  # raises it / does not / could not be read


@dataclass
class Boundaries:
    first: str
    first_status: str  # "found": the release before was read and lacks it; "bounded": it may be older
    before_first: str | None  # the release checked just before `first`, when there is one
    last: str
    last_status: str  # "found": the next release lacks it; "newest": the newest release has it; "bounded"
    after_last: str | None
    checked: dict[str, Check] = field(default_factory=dict)  # every release whose answer was used
    gaps: list[str] = field(default_factory=list)  # checked releases inside first..last that lack it


def search(releases: list[str], known: Mapping[str, Check], probe: Callable[[str], Check]) -> Boundaries:
    """Boundaries of the run of releases that raise a message.

    `releases` is every release, oldest first. `known` holds answers already in hand (the
    harvested releases); at least one of them must be True. `probe` reads any other release.
    Presence is assumed monotone on each side of the known raising releases; a checked release
    inside the range that lacks the message is reported in `gaps`, never hidden.
    """
    index = {v: i for i, v in enumerate(releases)}
    raising = [index[v] for v, ok in known.items() if ok and v in index]
    if not raising:
        raise ValueError("search needs at least one known release that raises the message")
    checked: dict[str, Check] = {}

    def check(i: int) -> Check:
        version = releases[i]
        if version not in checked:
            checked[version] = known[version] if version in known else probe(version)
        return checked[version]

    for version, ok in known.items():  # the harvested releases were read too, and may show a gap
        if version in index:
            checked[version] = ok
    first_known, last_known = min(raising), max(raising)
    first, before = _first(releases, known, index, first_known, check)
    last, after, newest = _last(releases, known, index, last_known, check)
    first_status = "found" if before is not None and checked[releases[before]] is False else "bounded"
    if newest:
        last_status = "newest"
    else:
        last_status = "found" if after is not None and checked[releases[after]] is False else "bounded"
    gaps = [v for v, ok in checked.items() if ok is False and first <= index[v] <= last]
    return Boundaries(
        first=releases[first], first_status=first_status,
        before_first=releases[before] if before is not None else None,
        last=releases[last], last_status=last_status,
        after_last=releases[after] if after is not None else None,
        checked=dict(sorted(checked.items(), key=lambda kv: index[kv[0]])),
        gaps=sorted(gaps, key=index.__getitem__))


def _first(releases, known, index, hi: int, check) -> tuple[int, int | None]:
    """(first raising index, index checked just before it or None): bisect below `hi`."""
    older_absent = [index[v] for v, ok in known.items() if ok is False and v in index and index[v] < hi]
    if older_absent:
        lo = max(older_absent)
        check(lo)
    elif hi == 0:
        return 0, None
    else:
        lo = 0
        if check(lo):
            return 0, None
    while hi - lo > 1:  # check(lo) is not True, check(hi) is True
        mid = (lo + hi) // 2
        if check(mid):
            hi = mid
        else:
            lo = mid
    return hi, lo


def _last(releases, known, index, lo: int, check) -> tuple[int, int | None, bool]:
    """(last raising index, index checked just after it or None, whether it is the newest)."""
    newer_absent = [index[v] for v, ok in known.items() if ok is False and v in index and index[v] > lo]
    top = len(releases) - 1
    if newer_absent:
        hi = min(newer_absent)
        check(hi)
    elif lo == top:
        return lo, None, True
    else:
        hi = top
        if check(hi):
            return hi, None, True
    while hi - lo > 1:  # check(lo) is True, check(hi) is not
        mid = (lo + hi) // 2
        if check(mid):
            lo = mid
        else:
            hi = mid
    return lo, hi, False
