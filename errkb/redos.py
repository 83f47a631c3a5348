"""A step bound for every search pattern, read from its structure rather than from a clock.

Validation used to time each pattern on adversarial text, so a busy machine could reject
valid data. Here the compiled pattern's parse tree is walked instead, and a pattern is
accepted only when one match attempt, at one start in the text, takes a bounded number of
steps whatever the text is:

- no backreferences, and nothing the walk does not know;
- a repeat that can give characters back (greedy or lazy) is bounded and repeats one
  character, so backtracking into it retries what follows at most (max - min + 1) times;
- an unbounded repeat is possessive and repeats one character: it scans a run once and never
  gives it back (a run counts as one step here);
- the bound, with every retry multiplied out, is at most STEP_BUDGET.

A search tries at most one attempt per position, so the time is linear in the text. The
timing benchmark lives in bench/redos_bench.py, never in validation.
"""

from __future__ import annotations

import re
from functools import lru_cache

try:  # Python 3.11+
    from re import _constants as C, _parser as parser
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as C  # type: ignore[no-redef]
    import sre_parse as parser  # type: ignore[no-redef]

from errkb import templates

# The derived patterns of the shipped data need at most ~1.3 million steps per start (two
# adjacent placeholders before a 512-step value); this leaves room for longer literals while
# refusing anything whose retries multiply out.
STEP_BUDGET = 4_000_000

_ONE_CHAR = {C.LITERAL, C.NOT_LITERAL, C.IN, C.ANY, C.CATEGORY}
_FREE = {C.AT}  # anchors: one step, no characters


class NotLinear(ValueError):
    """A pattern whose work per start is not bounded, or bounded too loosely."""


def _single_char(body) -> bool:
    return len(body) == 1 and body[0][0] in _ONE_CHAR


def _seq(items, after: int) -> int:
    """Steps to run `items` and then a continuation costing `after`, retries included."""
    cost = after
    for op, av in reversed(list(items)):
        cost = _item(op, av, cost)
        if cost > STEP_BUDGET:
            raise NotLinear(f"more than {STEP_BUDGET:,} steps per start")
    return cost


def _item(op, av, after: int) -> int:
    if op in _ONE_CHAR or op in _FREE:
        return 1 + after
    if op is C.SUBPATTERN:
        return _seq(av[-1], after)
    if op is C.ATOMIC_GROUP:
        return _seq(av, 0) + after
    if op in (C.ASSERT, C.ASSERT_NOT):
        return _seq(av[1], 0) + after
    if op is C.BRANCH:
        return sum(_seq(alt, after) for alt in av[1])
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
        low, high, body = av
        unbounded = high is C.MAXREPEAT
        if op is C.POSSESSIVE_REPEAT:
            if unbounded:
                if not _single_char(body):
                    raise NotLinear("an unbounded possessive repeat of more than one character")
                return 1 + after
            return high * _seq(body, 0) + after
        if unbounded:
            raise NotLinear("an unbounded repeat that can backtrack")
        if not _single_char(body):
            raise NotLinear("a backtracking repeat of more than one character")
        return high + (high - low + 1) * after if after else high
    raise NotLinear(f"unsupported regex construct {op}")


def step_bound(pattern: re.Pattern[str] | str) -> int:
    """Worst-case steps of one match attempt; raises NotLinear when there is no safe bound."""
    source = pattern.pattern if isinstance(pattern, re.Pattern) else pattern
    return _seq(parser.parse(source), 0)


@lru_cache(maxsize=None)
def template_step_bound(template: str) -> int:
    """`step_bound` of the search pattern the matcher derives from a template."""
    return step_bound(templates.search_source(template))


def near_misses(template: str, size: int = 64 * 1024) -> list[str]:
    """Texts that almost match the template's pattern: inputs for the Finder equivalence test
    and the timing benchmark (not for validation)."""
    literals = [lit for lit, _ in templates.parse(template) if lit]
    if not literals:
        return ["x" * size]
    near = "".join(lit + "x" * 7 for lit in literals[:-1]) + literals[-1][:-1]
    texts = [near, literals[0], literals[0] + "y" * 300, " " * 40 + literals[0]]
    return [(t * (size // max(1, len(t)) + 1))[:size] for t in texts]
