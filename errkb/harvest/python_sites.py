"""Find user-visible messages in Python source with `ast`.

Covers `raise X(msg)`, `assert cond, msg`, `warnings.warn(msg, Category)` and
`logger.error/exception/critical/warning(msg, *args)`, and `logger.info` for packages that
explain themselves at INFO (they only ever answer through a record: see errkb/match.py). f-strings, `.format` and `%`
parameters become named placeholders; module-level string constants and a message built in
a local variable just before the raise are followed. A whole message chosen by a conditional
expression (`"A" if pv else "B"`) gives one site per branch.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from errkb.templates import escape, placeholder_name as name_for_source

LOG_LEVELS = {"error": "log-error", "exception": "log-error", "critical": "log-error",
              "fatal": "log-error", "warning": "log-warning", "warn": "log-warning",
              "warning_once": "log-warning", "error_once": "log-error", "warning_one_rank": "log-warning"}
INFO_LEVELS = {"info": "log-info", "info_once": "log-info"}  # only for packages with "info_lines"
_PERCENT = re.compile(r"%(?:\((\w+)\))?[-#0 +]*\d*(?:\.\d+)?[sdifrxXeEgGc%]")


@dataclass(frozen=True)
class RawSite:
    path: str
    line: int
    language: str
    kind: str
    error_class: str | None
    template: str
    function: str | None


def placeholder_name(expr: ast.AST) -> str:
    """A readable identifier for the value an expression prints: `q.shape[-1]` -> `q_shape_1`."""
    return name_for_source(re.sub(r"^self\.", "", ast.unparse(expr)))


class _Message:
    """Builds a template from literal text and placeholder expressions."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.names: dict[str, str] = {}  # expression text -> placeholder name

    def text(self, s: str) -> None:
        self.parts.append(escape(s))

    def value(self, expr: ast.AST | None, hint: str | None = None) -> None:
        if isinstance(expr, ast.Constant) and isinstance(expr.value, (str, int, float)):
            self.text(str(expr.value))  # a constant argument prints as itself
            return
        key = ast.unparse(expr) if expr is not None else (hint or "value")
        if key not in self.names:
            base = hint or (placeholder_name(expr) if expr is not None else "value")
            name, n = base, 2
            while name in self.names.values():
                name, n = f"{base}_{n}", n + 1
            self.names[key] = name
        self.parts.append("{" + self.names[key] + "}")

    def result(self) -> str:
        return "".join(self.parts)


class _Extractor(ast.NodeVisitor):
    def __init__(self, path: str, constants: dict[str, str], levels: dict[str, str] = LOG_LEVELS) -> None:
        self.levels = levels
        self.path = path
        self.constants = constants
        self.sites: list[RawSite] = []
        self.functions: list[ast.AST] = []

    # ------------------------------------------------------------ message building

    def _build(self, node: ast.AST, msg: _Message, local: dict[str, ast.AST], depth: int = 0) -> bool:
        """Append `node` to `msg`; False when it is no recognisable message."""
        if depth > 8:
            return False
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            msg.text(node.value)
            return True
        if isinstance(node, ast.JoinedStr):
            for value in node.values:
                if isinstance(value, ast.Constant):
                    msg.text(str(value.value))
                elif isinstance(value, ast.FormattedValue):
                    msg.value(value.value)
            return True
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            ok_left = self._build(node.left, msg, local, depth + 1)
            if not ok_left:
                msg.value(node.left)
            if not self._build(node.right, msg, local, depth + 1):
                msg.value(node.right)
            return ok_left or bool(msg.parts)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            fmt = self._literal(node.left, local)
            if fmt is None:
                return False
            args = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
            self._percent(fmt, args, msg)
            return True
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "format"):
            fmt = self._literal(node.func.value, local)
            if fmt is None:
                return False
            self._format(fmt, node.args, {k.arg: k.value for k in node.keywords if k.arg}, msg)
            return True
        if isinstance(node, ast.Name):
            if node.id in local:
                return self._build(local[node.id], msg, {k: v for k, v in local.items() if k != node.id}, depth + 1)
            if node.id in self.constants:
                msg.text(self.constants[node.id])
                return True
        return False

    def _literal(self, node: ast.AST, local: dict[str, ast.AST]) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in local:
                return self._literal(local[node.id], {})
            return self.constants.get(node.id)
        return None

    def _percent(self, fmt: str, args: list[ast.expr], msg: _Message) -> None:
        pos, i = 0, 0
        for m in _PERCENT.finditer(fmt):
            msg.text(fmt[pos:m.start()])
            if m.group(0) == "%%":
                msg.text("%")
            elif m.group(1):
                msg.value(None, hint=m.group(1))
            else:
                msg.value(args[i] if i < len(args) else None)
                i += 1
            pos = m.end()
        msg.text(fmt[pos:])

    def _format(self, fmt: str, args: list[ast.expr], kwargs: dict[str, ast.expr], msg: _Message) -> None:
        import string

        auto = 0
        try:
            parsed = list(string.Formatter().parse(fmt))
        except ValueError:
            msg.text(fmt)
            return
        for literal, field, _spec, _conv in parsed:
            msg.text(literal)
            if field is None:
                continue
            key = re.split(r"[.\[]", field, maxsplit=1)[0]
            if key == "":
                expr = args[auto] if auto < len(args) else None
                auto += 1
            elif key.isdigit():
                expr = args[int(key)] if int(key) < len(args) else None
            else:
                expr = kwargs.get(key)
            if expr is None:
                msg.value(None, hint=placeholder_name(ast.Name(id=key or "value")) if key else "value")
            else:
                msg.value(expr)

    def _alternatives(self, node: ast.AST, local: dict[str, ast.AST], depth: int = 0) -> list[ast.AST]:
        """The messages a raise or call may print: one per branch of a conditional expression
        (`"A" if pv else "B"`, nested ones, one held in a local variable, one whose branches
        are `.format`ted or `%`-formatted together); any other message stands for itself.
        Only a whole message is split, so a conditional inside a concatenation or an f-string
        stays one placeholder, as before."""
        if depth > 8:
            return [node]
        if isinstance(node, ast.IfExp):
            return [*self._alternatives(node.body, local, depth + 1), *self._alternatives(node.orelse, local, depth + 1)]
        if isinstance(node, ast.Name) and node.id in local:
            inner = {k: v for k, v in local.items() if k != node.id}
            branches = self._alternatives(local[node.id], inner, depth + 1)
            if len(branches) > 1:
                return branches
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format"
                and isinstance(node.func.value, ast.IfExp)):
            return [ast.Call(func=ast.Attribute(value=fmt, attr="format", ctx=ast.Load()), args=node.args,
                             keywords=node.keywords)
                    for fmt in self._alternatives(node.func.value, local, depth + 1)]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and isinstance(node.left, ast.IfExp):
            return [ast.BinOp(left=fmt, op=ast.Mod(), right=node.right)
                    for fmt in self._alternatives(node.left, local, depth + 1)]
        return [node]

    def _templates(self, node: ast.AST | None, extra_args: list[ast.expr] | None = None) -> list[str]:
        """One template per message `node` may print (see `_alternatives`), in source order."""
        if node is None:
            return []
        local = self._locals_before(node)
        out: list[str] = []
        for branch in self._alternatives(node, local):
            template = self._template(branch, local, extra_args)
            if template is not None and template not in out:
                out.append(template)
        return out

    def _template(self, node: ast.AST, local: dict[str, ast.AST],
                  extra_args: list[ast.expr] | None = None) -> str | None:
        msg = _Message()
        if extra_args:  # logger.error("... %s", x): percent-format with the call's arguments
            fmt = self._literal(node, local)
            if fmt is None:
                return None
            self._percent(fmt, extra_args, msg)
        elif not self._build(node, msg, local):
            return None
        template = msg.result().strip()
        literal = re.sub(r"\{[^{}]*\}", "", template.replace("{{", "").replace("}}", ""))
        # A message that is nothing but a parameter tells a reader nothing we can match.
        return template if re.search(r"[A-Za-z]{3}", literal) else None

    def _locals_before(self, node: ast.AST) -> dict[str, ast.AST]:
        """Simple `name = <expr>` assignments earlier in the enclosing function."""
        if not self.functions:
            return {}
        found: dict[str, ast.AST] = {}
        line = getattr(node, "lineno", 0)
        for stmt in ast.walk(self.functions[-1]):
            if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], ast.Name) and stmt.lineno < line):
                found[stmt.targets[0].id] = stmt.value
        return found

    # ------------------------------------------------------------ visitors

    def _add(self, node: ast.AST, kind: str, error_class: str | None, templates: list[str]) -> None:
        fn = self.functions[-1].name if self.functions else None  # type: ignore[attr-defined]
        for template in templates:
            self.sites.append(RawSite(self.path, node.lineno, "python", kind, error_class, template, fn))

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.functions.append(node)
        self.generic_visit(node)
        self.functions.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Raise(self, node: ast.Raise) -> None:
        exc = node.exc
        if isinstance(exc, ast.Call) and exc.args:
            self._add(node, "raise", _dotted_tail(exc.func), self._templates(exc.args[0]))
        self.generic_visit(node)

    def visit_Assert(self, node: ast.Assert) -> None:
        msg = node.msg
        # `assert ok, RuntimeError("...")` prints the exception's text after `AssertionError: `
        if isinstance(msg, ast.Call) and msg.args and _is_exception_name(_dotted_tail(msg.func)):
            msg = msg.args[0]
        if msg is not None:
            self._add(node, "assert", "AssertionError", self._templates(msg))
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = _dotted_tail(func)
        if name == "warn" and node.args and _is_warnings_call(func):
            category = node.args[1] if len(node.args) > 1 else next(
                (k.value for k in node.keywords if k.arg == "category"), None)
            cls = _dotted_tail(category) if category is not None else "UserWarning"
            self._add(node, "warning", cls, self._templates(node.args[0]))
        elif (isinstance(func, ast.Attribute) and func.attr in self.levels and node.args
              and _looks_like_logger(func.value)):
            extra = node.args[1:] if len(node.args) > 1 else None
            self._add(node, self.levels[func.attr], None, self._templates(node.args[0], extra))
        self.generic_visit(node)


def _dotted_tail(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Call):
        return _dotted_tail(node.func)
    return None


def _is_exception_name(name: str | None) -> bool:
    return bool(name) and name.endswith(("Error", "Exception"))


def _is_warnings_call(func: ast.AST) -> bool:
    return isinstance(func, ast.Name) or (
        isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "warnings")


def _looks_like_logger(node: ast.AST) -> bool:
    text = ast.unparse(node).lower()
    return "log" in text


def _module_constants(tree: ast.Module) -> dict[str, str]:
    out: dict[str, str] = {}
    for stmt in tree.body:
        if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)):
            out[stmt.targets[0].id] = stmt.value.value
    return out


def extract(path: str, text: str, info_lines: bool = False) -> list[RawSite]:
    """All message sites in one Python file; a file that does not parse yields none. INFO
    log lines are read only when asked (`info_lines` in data/packages.json)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    extractor = _Extractor(path, _module_constants(tree), {**LOG_LEVELS, **INFO_LEVELS} if info_lines else LOG_LEVELS)
    extractor.visit(tree)
    return extractor.sites
