"""Stage three: the function and class bodies libcst need not see.

A kernel rule (one that keeps `Rule.run`) reports only at a call whose function resolves to its
TARGETS, from what the analysis reads at that call: the call, the `with` blocks around it in
its function, the bindings of that function, of the functions around it and of the module, and
the `self.<attr>` values stored in the methods of its class (analysis.ModuleIndex.resolve,
.value, .dict_items, tensor_facts). A configuration rule reads the Launches launch_python builds
(from such calls and from string literals) and which scopes import what. Most of a large module
is other code: those bodies are replaced by a string over as many lines, so every line and
column of the rest is unchanged, and libcst parses the shorter source; the findings and their
positions are those of the whole file.

The regions (pyfacts: the module, and each function or class body) that stay:

- those screen.candidates names: holding a call that may resolve to a kept kernel rule's
  target; with a configuration rule kept, a call or literal launch_python may turn into a
  Launch, and every import statement;
- every region around a region that stays (a blanked body takes its nested bodies with it);
- every method that stores `self.attr = ...` for an attribute the analysis may read from those
  calls: followed from the calls and the with-items around them, through what is assigned to
  the names they use and stored to the attributes, in any scope (the analysis follows
  `self.attr` through all its stores in the class, so none may go).

A rule with its own `run` (EKB401) may read anything: a file where it may report is parsed
whole. So is a module that is not UTF-8, has a coding cookie or a bare carriage return, or
whose narrowed source libcst refuses (engine.py then parses the whole file).
"""

from __future__ import annotations

import ast
import re

from errkb.lint.pyfacts import ModuleFacts

_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=]")


def plan(facts: ModuleFacts, regions: set, calls: list) -> list[ast.AST]:
    """The functions and classes whose bodies libcst need not see, given the regions that must
    stay and the calls the rules read (screen.candidates)."""
    kept: set[ast.AST] = set()

    def keep(region) -> None:
        while region is not None and region not in kept:
            kept.add(region)
            region = facts.parent[region]

    for region in regions:
        keep(region)
    attrs = _attributes_read(facts, calls)
    for f, (_, self_name) in facts.methods.items():
        if f not in kept and self_name and any(n == self_name and a in attrs for n, a in facts.stores[f]):
            keep(f)
    return [f for f in facts.parent if f not in kept]


def _attributes_read(facts: ModuleFacts, calls: list) -> set[str]:
    """The attribute names X of every `name.X` the analysis may read from the calls: in the
    calls and the with-items of their regions, and, following names to what is assigned to
    them (or stored into them, or their parameters' defaults) and attributes to what is stored
    to them, in any scope. A superset of what resolve, value, dict_items and tensor_facts
    reach from a call."""
    stack: list = [call for call, _ in calls]
    for region in {region for _, region in calls}:
        stack.extend(facts.withs.get(region, ()))
    names: set[str] = set()
    attrs: set[str] = set()
    while stack:
        node = stack.pop()
        t = type(node)
        if t is ast.Name:
            if node.id not in names:
                names.add(node.id)
                stack.extend(facts.values.get(node.id, ()))
            continue
        if t is ast.Attribute and type(node.value) is ast.Name and node.attr not in attrs:
            attrs.add(node.attr)
            stack.extend(facts.attr_values.get(node.attr, ()))
        for field in getattr(node, "_fields", ()):
            value = getattr(node, field, None)
            if type(value) is list:
                stack.extend(value)
            elif isinstance(value, ast.AST):
                stack.append(value)
    return attrs


def narrowed(source: bytes, functions: list[ast.AST]) -> bytes | None:
    """The source with the bodies of `functions` (and classes) replaced by a string over the same
    lines, or None when the file is not one this can do safely (see the module docstring)."""
    if not functions or b"\r" in source or any(_COOKIE.match(line) for line in source.split(b"\n", 2)[:2]):
        return None
    try:
        source.decode("utf-8")
    except UnicodeDecodeError:
        return None
    lines = source.split(b"\n")  # the last item is what follows the last newline
    spans = []
    for f in functions:
        first = f.body[0]
        start = min([first.lineno, *(d.lineno for d in getattr(first, "decorator_list", ()))])
        if start <= f.lineno or (not getattr(first, "decorator_list", None)
                                 and lines[start - 1][:first.col_offset].strip()):
            continue  # the body begins on the header's line: left as it is
        spans.append((start, f.body[-1].end_lineno))
    spans.sort()
    last = 0
    for start, end in spans:
        if start <= last:
            continue  # inside a body already replaced
        last = end
        line = lines[start - 1]
        indent = line[:len(line) - len(line.lstrip(b" \t\f"))]
        if start == end:
            lines[start - 1] = indent + b"..."
            continue
        lines[start - 1] = indent + b"'''"
        for i in range(start, end - 1):
            lines[i] = b""
        lines[end - 1] = b"'''"
    return b"\n".join(lines)


__all__ = ["narrowed", "plan"]
