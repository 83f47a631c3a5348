"""What one walk over CPython's tree of a module tells the stages before libcst (screen.py,
narrow.py): imports and simple bindings by name, attribute stores, calls and the region each
sits in, and which tools the module's string literals may launch.

The walk reads node fields directly (about three times faster than ast.walk) and is done once
per file, only for a file that gets that far. A region is the module (None) or the body of one
function or class; a header (decorators, parameters, defaults, bases, annotations) belongs to
the region around it, because it stays in the source when the body is blanked.
"""

from __future__ import annotations

import ast
import re
from typing import Iterable

from errkb.lint.analysis import relative_base
from errkb.lint.launch import MODULES, framework_tools, launcher

_NAMES = (ast.Name, ast.Attribute)
_NONE = type(None)
# A string piece that launcher(shlex.split(piece)) accepts holds, once quotes and backslashes
# (shlex's only syntax here) are removed, `<tool>` + whitespace + `serve`, or `-m` + whitespace + a
# launcher module of the tool; CPython joining `"a" "b"` (libcst reads each piece) cannot remove either.
_STARTS_SERVER = {tool: re.compile(rf"{tool}\s+serve|\s-m\s+(?:"
                                   + "|".join(re.escape(m) for m, t in MODULES.items() if t == tool) + ")")
                  for tool in ("vllm", "sglang")}
_SHELL_QUOTING = str.maketrans("", "", "'\"\\")


def _is_sys_executable(e: ast.AST) -> bool:
    """`sys.executable`: the interpreter a launcher list starts with as often as "python"."""
    return type(e) is ast.Attribute and e.attr == "executable" and type(e.value) is ast.Name and e.value.id == "sys"


def word_launches(elements: list) -> set[str]:
    """The tools launcher() finds starting at any word of a list, tuple or with-items (CPython
    joins `"a" "b"` into one word where libcst sees none: the launchers libcst finds are among
    these)."""
    words = [e.value if type(e) is ast.Constant and type(e.value) is str else "python" if _is_sys_executable(e)
             else "" for e in elements]
    found: set[str] = set()
    if not any(words):
        return found
    for w in words:  # a framework's argv list passing engine arguments on (launch.framework_launches)
        if "sglang" in w or "vllm" in w:
            found |= framework_tools(w.translate(_SHELL_QUOTING))
    i = 0
    while (got := launcher(words[i:])) is not None:
        found.add(got[0])
        i += got[1] - 1  # on after the match's first word (its options start two or three words later)
    return found


_UNKNOWN_WORD = ast.Constant(value=None)
# A module-level list longer than this is data, not options: splicing it into every `+` that names
# it made a 50,000-word list joined 2,000 times take minutes (the file timeout caught it).
MAX_SPLICED = 256


def module_lists(tree: ast.Module) -> dict[str, ast.List | ast.Tuple]:
    """Module-level names bound once, to a list or tuple literal: the words a command line may
    splice in with `+` or `*` (launch_python._module_lists reads the same from libcst's tree)."""
    bound: dict[str, list] = {}
    for stmt in tree.body:
        t = type(stmt)
        if t is ast.Assign:
            for target in stmt.targets:
                if type(target) is ast.Name:
                    bound.setdefault(target.id, []).append(stmt.value)
        elif (t is ast.AugAssign or t is ast.AnnAssign) and type(stmt.target) is ast.Name:
            bound.setdefault(stmt.target.id, []).append(stmt.value)
    return {name: values[0] for name, values in bound.items()
            if len(values) == 1 and type(values[0]) in (ast.List, ast.Tuple) and len(values[0].elts) <= MAX_SPLICED}


def spliced(node: ast.AST, lists: dict, depth: int = 0) -> list | None:
    """The elements of a list or tuple, with `*NAME` of a module-level list spliced in, or of a
    `+` of such pieces; None for anything else (an unknown piece of a `+` is one unknown word)."""
    if depth > 8:
        return None
    t = type(node)
    if t is ast.Name and node.id in lists:
        return spliced(lists[node.id], lists, depth + 1)
    if t is ast.BinOp and type(node.op) is ast.Add:
        left, right = spliced(node.left, lists, depth + 1), spliced(node.right, lists, depth + 1)
        if left is None and right is None:
            return None
        return (left if left is not None else [_UNKNOWN_WORD]) + (right if right is not None else [_UNKNOWN_WORD])
    if t is not ast.List and t is not ast.Tuple:
        return None
    out = []
    for e in node.elts:
        if type(e) is ast.Starred:
            got = spliced(e.value, lists, depth + 1) if type(e.value) is ast.Name else None
            out.extend(got if got is not None else [_UNKNOWN_WORD])
        else:
            out.append(e)
    return out


class ModuleFacts:
    """The facts of one module, by region (see the module docstring)."""

    def __init__(self, tree: ast.Module, module: str, is_package: bool) -> None:
        self.imports: dict[str, set[str]] = {}  # local name -> qualified names, as analysis binds them
        self.assigns: dict[str, list[ast.expr]] = {}  # name = <Name or Attribute>
        self.stored: dict[str, list[ast.expr]] = {}  # X.attr = <Name or Attribute>
        # what the analysis may read for a name or an attribute, whatever the scope: values
        # assigned to the name (and keys and values stored into it, name[k] = v), defaults of
        # parameters of that name; values stored to X.attr
        self.values: dict[str, list[ast.expr]] = {}
        self.attr_values: dict[str, list[ast.expr]] = {}
        self.withs: dict[ast.AST | None, list[ast.expr]] = {}  # the with-items of a region
        self.calls: list[tuple[ast.Call, ast.AST | None]] = []
        self.parent: dict[ast.AST, ast.AST | None] = {}  # function or class -> the region around it
        # (name, attr) of every `name.attr` used in a region, and of every `name.attr = <value>`
        self.attrs: dict[ast.AST | None, set[tuple[str, str]]] = {None: set()}
        self.stores: dict[ast.AST | None, set[tuple[str, str]]] = {None: set()}
        # method -> (its class, the name of its first parameter), as analysis._Collector sees methods
        self.methods: dict[ast.AST, tuple[ast.ClassDef, str | None]] = {}
        self.literal_tools: set[str] = set()  # tools string literals may launch (launch_python)
        self.launch_regions: set[ast.AST | None] = set()  # regions of those literals
        self.import_regions: set[ast.AST | None] = set()  # regions holding an import statement
        self._module, self._is_package = module, is_package
        lists = module_lists(tree)
        jobs: list[tuple[ast.AST | None, list]] = [(None, [tree])]
        while jobs:
            region, stack = jobs.pop()
            attrs, calls = self.attrs[region], self.calls
            while stack:
                node = stack.pop()
                t = type(node)
                if t is _NONE or t is str:  # in Dict.keys, kw_defaults, Global.names
                    continue
                if t is ast.Attribute:
                    value = node.value
                    if type(value) is ast.Name:
                        attrs.add((value.id, node.attr))
                    else:
                        stack.append(value)
                    continue
                elif t is ast.Call:
                    calls.append((node, region))
                    stack.append(node.func)
                    stack.extend(node.args)
                    stack.extend(node.keywords)
                    continue
                elif t is ast.Constant:
                    if type(node.value) is str and self._string(node.value):
                        self.launch_regions.add(region)
                    continue
                elif t is ast.Name:
                    continue
                elif t is ast.FunctionDef or t is ast.AsyncFunctionDef:
                    self._region(node, region, jobs, stack)
                    continue
                elif t is ast.ClassDef:
                    self._methods(node)
                    self._region(node, region, jobs, stack)
                    continue
                elif t is ast.Assign or t is ast.AnnAssign or t is ast.NamedExpr:
                    self._assignment(node, region)
                elif t is ast.Import or t is ast.ImportFrom:
                    self._import(node)
                    self.import_regions.add(region)
                    continue
                elif t is ast.keyword:
                    if node.arg is not None and node.arg.startswith("VLLM_"):
                        self._launches({"vllm"}, region)
                elif t is ast.List or t is ast.Tuple:
                    self._launches(word_launches(spliced(node, lists) if lists else node.elts), region)
                elif t is ast.BinOp and type(node.op) is ast.Add:  # [python, -m, X] + FLAGS
                    self._launches(word_launches(spliced(node, lists) or []), region)
                elif t is ast.With or t is ast.AsyncWith:  # libcst may read `with ("a", "b"):` as a tuple
                    items = [item.context_expr for item in node.items]
                    self.withs.setdefault(region, []).extend(items)
                    self._launches(word_launches(items), region)
                for field in node._fields:
                    value = getattr(node, field, None)
                    if type(value) is list:
                        stack.extend(value)
                    elif isinstance(value, ast.AST):
                        stack.append(value)

    def _region(self, node, region, jobs: list, stack: list) -> None:
        """A function or class: its body is a region of its own, walked later; its header
        (decorators, parameters, bases, annotations) is walked now, in the region around."""
        self.parent[node] = region
        self.attrs[node], self.stores[node] = set(), set()
        jobs.append((node, list(node.body)))
        if type(node) is ast.ClassDef:  # a call of the class may be one of its bases' (analysis.subclassed)
            self.assigns.setdefault(node.name, []).extend(b for b in node.bases if isinstance(b, _NAMES))
        else:
            args = node.args
            positional = [*args.posonlyargs, *args.args]
            for param, default in [*zip(positional[len(positional) - len(args.defaults):], args.defaults),
                                   *zip(args.kwonlyargs, args.kw_defaults)]:
                if default is not None:
                    self.values.setdefault(param.arg, []).append(default)
        for field in node._fields:
            value = getattr(node, field, None)
            if field != "body" and type(value) is list:
                stack.extend(v for v in value if isinstance(v, ast.AST))
            elif isinstance(value, ast.AST):
                stack.append(value)

    @property
    def bound(self) -> set[str]:
        """Every qualified name an import of the module binds."""
        return set().union(*self.imports.values())

    def _launches(self, tools: set[str], region) -> None:
        if tools:
            self.literal_tools |= tools
            self.launch_regions.add(region)

    def _string(self, v: str) -> bool:
        """Whether the string may be (a piece of) a launch: a VLLM_* name, or a command line."""
        if v.startswith("VLLM_"):
            self.literal_tools.add("vllm")
            return True
        if "vllm" in v or "sglang" in v:
            plain = v.translate(_SHELL_QUOTING)
            tools = {t for t, starts in _STARTS_SERVER.items() if t in v and starts.search(plain)}
            tools |= framework_tools(plain)
            self.literal_tools |= tools
            return bool(tools)
        return False

    def _methods(self, cls: ast.ClassDef) -> None:
        """The functions defined in the class body (under if/try/with/for too): their first
        parameter is `self` to the analysis, unless decorated with staticmethod."""
        stack = list(cls.body)
        while stack:
            node = stack.pop()
            if type(node) is ast.FunctionDef or type(node) is ast.AsyncFunctionDef:
                params = [*node.args.posonlyargs, *node.args.args]
                static = any(type(d) is ast.Name and d.id == "staticmethod" for d in node.decorator_list)
                self.methods[node] = (cls, params[0].arg if params and not static else None)
            elif type(node) is not ast.ClassDef:
                for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                    stack.extend(getattr(node, field, ()))

    def _import(self, node) -> None:
        if type(node) is ast.Import:
            for alias in node.names:
                top = alias.name.split(".")[0]
                self.imports.setdefault(alias.asname or top, set()).add(alias.name if alias.asname else top)
            return
        mod = relative_base(self._module, self._is_package, node.level, node.module) if node.level else node.module
        if mod is not None:
            for alias in node.names:
                if alias.name != "*":
                    self.imports.setdefault(alias.asname or alias.name, set()).add(f"{mod}.{alias.name}")

    def _assignment(self, node, region) -> None:
        value = node.value
        if value is None:
            return
        for target in (node.targets if type(node) is ast.Assign else [node.target]):
            t = type(target)
            if t is ast.Name:
                self.values.setdefault(target.id, []).append(value)
                if isinstance(value, _NAMES):
                    self.assigns.setdefault(target.id, []).append(value)
            elif t is ast.Attribute:
                if type(target.value) is ast.Name:
                    self.stores[region].add((target.value.id, target.attr))
                self.attr_values.setdefault(target.attr, []).append(value)
                if isinstance(value, _NAMES):
                    self.stored.setdefault(target.attr, []).append(value)
            elif t is ast.Subscript and type(target.value) is ast.Name:
                self.values.setdefault(target.value.id, []).extend((target.slice, value))


def prefixes(names: Iterable[str]) -> set[str]:
    """Every dotted prefix of the names ("a", "a.b", "a.b.c" for "a.b.c")."""
    out = set()
    for name in names:
        parts = name.split(".")
        out.update(".".join(parts[:k]) for k in range(1, len(parts) + 1))
    return out


class Resolver:
    """The qualified names each name and attribute of the module may stand for, kept only where
    they may lead to one of `targets` or lie in one of the `families` (top-level packages): the
    least fixed point over every binding, whatever its scope, and `X.attr` also as any value
    stored to `<name>.attr` anywhere. A superset of what analysis.ModuleIndex.resolve returns,
    which builds every name from an import's qualified name and attribute names."""

    def __init__(self, facts: ModuleFacts, targets: Iterable[str], families: Iterable[str] = ()) -> None:
        self.prefixes = prefixes(targets)
        self.families = frozenset(families)
        # resolve() follows at most 8 steps, each adding at most one attribute to an import's name:
        # longer names in a family cannot come out of it, and `x = x.y` must not grow them forever
        self.longest = max((q.count(".") for qs in facts.imports.values() for q in qs), default=0) + 10
        self.names = {n: {q for q in qs if self._wanted(q)} for n, qs in facts.imports.items()}
        self.attrs: dict[str, set[str]] = {}
        changed = True
        while changed:
            changed = False
            for table, sources in ((self.names, facts.assigns), (self.attrs, facts.stored)):
                for key, values in sources.items():
                    got = table.setdefault(key, set())
                    for value in values:
                        new = self(value) - got
                        if new:
                            got |= new
                            changed = True

    def _wanted(self, name: str) -> bool:
        return name in self.prefixes or (name.split(".", 1)[0] in self.families and name.count(".") <= self.longest)

    def __call__(self, expr: ast.expr) -> set[str]:
        if type(expr) is ast.Name:
            return self.names.get(expr.id, set())
        if type(expr) is ast.Attribute:
            out = {q for q in (f"{q}.{expr.attr}" for q in self(expr.value)) if self._wanted(q)}
            return out | self.attrs.get(expr.attr, set())
        return set()


__all__ = ["ModuleFacts", "Resolver", "prefixes", "word_launches"]
