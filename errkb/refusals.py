"""Kernel refusal listings: which of the listed reasons decided the failure.

xFormers' dispatcher, when no kernel accepts the inputs, prints one block per kernel headed
"`<kernel>` is not supported because:" with that kernel's reasons below. Most blocks carry
reasons that are true but beside the point (the small-K kernel's head-dim limit, FA3's "too
old"): the CUTLASS kernel is the broad fallback, so what decides the failure is a reason it
gives, or one every kernel gives. A record matched on such a deciding line ranks before the
generic "No operator found" record; one matched on any other reason line is incidental and
ranks below it.

The small-K kernel's head-dim limit is incidental wherever it is printed, even when a paste cut the
listing above the smallkF block: smallkF takes K <= 32 (SUPPORTED_MAX_K 32 in small_k.py, which
exists in 0.0.16-0.0.27), and every forward priority list of those releases holds cutlassF
(SUPPORTED_MAX_K 65536) before it, so cutlassF's block, not this limit, says why the call failed.
"""

from __future__ import annotations

import re

BLOCK_HEADER = re.compile(r"^[ \t]*`([^`\n]+)` is not supported because:[ \t]*$", re.MULTILINE)
_BLOCK_END = re.compile(r"\s*$|\s*Traceback |\s*File \"|[\w.]*(?:Error|Exception)\b")
SMALL_K = "smallkF"
SMALL_K_LIMIT = re.compile(r"max\(query\.shape\[-1\] (?:!=|,) value\.shape\[-1\]\) > 32|unsupported embed per head: \d+")
INCIDENTAL_PENALTY = 0.2  # more than every bonus a hit can earn, so the generic record goes first
DECIDING_BONUS = 0.1  # a short reason ("device=cpu ...") still goes before the generic record
DECIDING_WHY = "a reason the CUTLASS kernel or every kernel gave: the one that decided it"


def reason_spans(text: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Spans of the deciding reason lines (the CUTLASS kernel's, or every kernel's) and of the
    incidental ones."""
    blocks: list[tuple[str, list[tuple[int, int, str]]]] = []
    for header in BLOCK_HEADER.finditer(text):
        lines, at = [], header.end() + 1
        while at < len(text):
            end = text.find("\n", at)
            end = len(text) if end < 0 else end
            line = text[at:end]
            if BLOCK_HEADER.match(line) or _BLOCK_END.match(line):
                break
            lines.append((at, end, line.strip()))
            at = end + 1
        blocks.append((header.group(1), lines))
    if len(blocks) < 2:  # one block decides nothing, but the small-K limit never decides
        return [], [(a, b) for name, lines in blocks if name == SMALL_K
                    for a, b, reason in lines if SMALL_K_LIMIT.fullmatch(reason)]
    everywhere = set.intersection(*({reason for _, _, reason in lines} for _, lines in blocks))
    deciding = everywhere | {reason for name, lines in blocks if name.startswith("cutlass") for _, _, reason in lines}
    spans: tuple[list[tuple[int, int]], list[tuple[int, int]]] = ([], [])
    for _, lines in blocks:
        for a, b, reason in lines:
            spans[reason not in deciding].append((a, b))
    return spans


def weigh_reasons(hits: list[tuple], text: str) -> list[tuple]:
    """Hits (entry, score, span, params, why) raised where they matched a deciding reason and
    lowered where they matched an incidental one."""
    if "is not supported because:" not in text:
        return hits
    deciding, incidental = reason_spans(text)
    if not incidental:
        return hits
    out = []
    for hit in hits:
        start = hit[2][0]
        if not any(a <= start < b for a, b in deciding + incidental):
            hit = _moved_to_a_listing(hit, text, deciding)  # a cut-off listing pasted above the whole one
            start = hit[2][0]
        if any(a <= start < b for a, b in deciding):
            hit = (hit[0], hit[1] + DECIDING_BONUS, hit[2], hit[3], [*hit[4], DECIDING_WHY])
        elif span := next(((a, b) for a, b in incidental if a <= start < b), None):
            why = ("the small-K kernel's own head-dim limit (K <= 32): cutlassF, listed before it, takes larger ones"
                   if SMALL_K_LIMIT.fullmatch(text[span[0]:span[1]].strip())
                   else "a reason only some of the kernels gave (not the CUTLASS kernel's, nor every kernel's)")
            hit = (hit[0], hit[1] - INCIDENTAL_PENALTY, hit[2], hit[3], [*hit[4], why])
        out.append(hit)
    return out


def _moved_to_a_listing(hit: tuple, text: str, deciding: list[tuple[int, int]]) -> tuple:
    """The hit again on a deciding reason line, the last one printed (a paste that opens with the
    tail of one refusal listing and then holds a whole one); else as it was."""
    for a, b in reversed(deciding):
        if (m := hit[0].pattern.search(text, a, b)) is not None:
            return (hit[0], hit[1], m.span(), hit[3], hit[4])
    return hit
