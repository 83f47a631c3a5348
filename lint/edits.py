"""Autofixes as rules write them: edits anchored on libcst nodes. The engine turns them into
character offsets (results.Fix) once it knows the nodes' positions, and only for a record
whose verification status is `confirmed` and whose fix the rule names in FIXES."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

START, END = "start", "end"


@dataclass(frozen=True)
class Edit:
    """The source from `start` to `end` (each a node and which of its two ends) becomes `text`."""

    start: tuple[cst.CSTNode, str]
    end: tuple[cst.CSTNode, str]
    text: str


@dataclass(frozen=True)
class RuleFix:
    title: str
    safe: bool
    edits: tuple[Edit, ...]


def replace(node: cst.CSTNode, text: str) -> Edit:
    return Edit((node, START), (node, END), text)


def insert_after(node: cst.CSTNode, text: str) -> Edit:
    return Edit((node, END), (node, END), text)


def code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def simple(expr: cst.BaseExpression) -> bool:
    """A name or a dotted attribute of one: repeating or moving it cannot change what runs."""
    while isinstance(expr, cst.Attribute):
        expr = expr.value
    return isinstance(expr, cst.Name)


def passed_here(args, name: str) -> cst.Arg | None:
    """The argument `name` as written in the call (keyword or positional); None when it is not
    passed or comes from a ** dict, where an edit of the call cannot reach it."""
    got = args.given.get(name)
    if got is None or not isinstance(got[2], cst.Arg) or got[2].value is not got[0] or got[2].star:
        return None
    return got[2]


def drop_arg(call: cst.Call, arg: cst.Arg) -> Edit:
    """Remove an argument: a keyword one with its comma, a positional one becomes None (the
    later positions must not move)."""
    if arg.keyword is None:
        return replace(arg.value, "None")
    i = next(n for n, a in enumerate(call.args) if a is arg)
    if i + 1 < len(call.args):
        return Edit((arg, START), (call.args[i + 1], START), "")
    if i > 0:
        return Edit((call.args[i - 1], END), (arg, END), "")
    return replace(arg, "")


def add_keyword(call: cst.Call, name: str, value: str) -> Edit:
    """Append `name=value` after the call's last argument (the call has one)."""
    return insert_after(call.args[-1], f", {name}={value}")


def resolve(fix: RuleFix, record_fix: int, positions, line_starts: list[int]):
    """The fix in character offsets of the source (results.Fix)."""
    from errkb.lint.results import Fix

    def offset(anchor) -> int:
        node, which = anchor
        pos = getattr(positions[node], which)
        return line_starts[pos.line - 1] + pos.column

    return Fix(fix.title, fix.safe, record_fix,
               tuple((offset(e.start), offset(e.end), e.text) for e in fix.edits))
