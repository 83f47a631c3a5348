"""What a module's calls really target, and which values reach their arguments.

One libcst pass over a module collects scopes (module, functions), the bindings in each
(imports, defs, assignments, parameters), `self.attr = value` per class, subscript stores into
dicts (`kw["x"] = ...`) and every call with the `with` contexts around it. Resolution happens
afterwards and is flow-insensitive inside a scope: an import inside a branch or a function counts,
and a name that is also bound by a local `def`/`class`/parameter is ambiguous, so it resolves to
nothing (a local function that merely shares a name is never reported).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst

# ------------------------------------------------------------------ values


class _Unknown:
    __slots__ = ()

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()


@dataclass(frozen=True)
class QualName:
    """A value that is a dotted name from an import, e.g. torch.float8_e4m3fn."""

    name: str


@dataclass(frozen=True)
class ParamValue:
    """A function parameter: its value is the caller's; `default` is the default's value."""

    default: object  # UNKNOWN when there is none


class _MaybeNone:
    """The value of a name that is None on some assignment path and something else on another
    (`m = None` in one branch, `m = mask` in the other): like a parameter defaulting to None, the
    argument is "maybe absent"."""

    def __repr__(self) -> str:
        return "MAYBE_NONE"


MAYBE_NONE = _MaybeNone()

# argument states seen by rules
ABSENT = "absent"  # not passed, or passed as an explicit None
MAYBE = "maybe"  # may or may not be None (a forwarded Optional parameter, an opaque **splat)
PRESENT = "present"  # passed with a value that is not None


def literal(arg: "Arg") -> object:
    """The argument's value when it is a plain constant (int, float, str, bool, None), else UNKNOWN."""
    v = arg.value
    return v if v is None or type(v) in (int, float, str, bool) else UNKNOWN


@dataclass
class Arg:
    state: str
    value: object = UNKNOWN  # a Python constant, QualName, tuple or UNKNOWN
    node: cst.CSTNode | None = None  # where to report (the keyword or the argument)


# ------------------------------------------------------------------ bindings


@dataclass
class Binding:
    kind: str  # import | def | class | assign | param | other
    scope: "Scope"
    qualname: str | None = None  # for import
    value: cst.BaseExpression | None = None  # for assign / param default
    cls: "ClassInfo | None" = None  # for class


@dataclass
class Scope:
    kind: str  # module | function | class
    parent: "Scope | None"
    cls: "ClassInfo | None" = None  # for methods: the class they are defined in
    self_name: str | None = None  # first parameter name of a method
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    stores: dict[str, list[tuple[cst.BaseExpression, cst.BaseExpression]]] = field(default_factory=dict)

    def bind(self, name: str, binding: Binding) -> None:
        self.bindings.setdefault(name, []).append(binding)


@dataclass
class ClassInfo:
    name: str
    attrs: dict[str, list[tuple[cst.BaseExpression, Scope]]] = field(default_factory=dict)
    methods: set[str] = field(default_factory=set)
    bases: tuple[cst.BaseExpression, ...] = ()


@dataclass
class WithContext:
    call: cst.Call
    scope: Scope


@dataclass
class CallSite:
    node: cst.Call
    scope: Scope
    withs: tuple[WithContext, ...]


# ------------------------------------------------------------------ module name


class ModuleNames:
    """Dotted module names of files, from the __init__.py files above them. One per lint run:
    folders are looked up once in that run, and nothing outlives it."""

    def __init__(self) -> None:
        self._packages: dict[Path, str] = {}

    def _package_of(self, d: Path) -> str:
        """Dotted package name of a folder ('' when it has no __init__.py)."""
        got = self._packages.get(d)
        if got is None:
            if (d / "__init__.py").is_file() and d.parent != d:
                parent = self._package_of(d.parent)
                got = f"{parent}.{d.name}" if parent else d.name
            else:
                got = ""
            self._packages[d] = got
        return got

    def __call__(self, path: Path | None) -> str:
        if path is None:
            return ""
        path = Path(os.path.abspath(path))
        pkg = self._package_of(path.parent)
        if path.name == "__init__.py":
            return pkg
        return f"{pkg}.{path.stem}" if pkg else path.stem


def module_name(path: Path | None) -> str:
    """Dotted module name of one file ('' when unknown), with nothing cached."""
    return ModuleNames()(path)


def _dotted(node: cst.BaseExpression | None) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr.value}" if base else None
    return None


def relative_base(importer: str, is_package: bool, level: int, module: str | None) -> str | None:
    """What `from <level dots><module> import ...` in module `importer` imports from (None: above
    the top package). screen.py resolves relative imports with it too, so both agree."""
    parts = importer.split(".") if importer else []
    if not is_package:
        parts = parts[:-1]
    if level - 1 > len(parts):
        return None
    parts = parts[: len(parts) - (level - 1)]
    if module:
        parts.append(module)
    return ".".join(parts) if parts else None


# ------------------------------------------------------------------ collection


_SKIP_FIELDS = ("whitespace", "lpar", "rpar", "comma", "semicolon", "leading_lines", "header", "footer",
                "lines_after_decorators", "equal", "colon", "dot", "operator", "newline", "asynchronous")
_FIELDS: dict[type, tuple[str, ...]] = {}


def _children(node: cst.CSTNode):
    """Child nodes by reading dataclass fields (libcst's own visitor rebuilds every node: slow)."""
    names = _FIELDS.get(type(node))
    if names is None:
        names = _FIELDS[type(node)] = tuple(
            f.name for f in dataclasses.fields(node) if not any(k in f.name for k in _SKIP_FIELDS))
    for name in names:
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            yield value
        elif isinstance(value, (tuple, list)):
            for v in value:
                if isinstance(v, cst.CSTNode):
                    yield v


class _Walker:
    """A read-only visitor: visit_<Type> (return False to skip the children) and leave_<Type>."""

    _dispatch: dict = {}

    def walk(self, node: cst.CSTNode) -> None:
        cls = type(node)
        key = (type(self), cls)
        hooks = self._dispatch.get(key)
        if hooks is None:
            hooks = self._dispatch[key] = (getattr(type(self), f"visit_{cls.__name__}", None),
                                           getattr(type(self), f"leave_{cls.__name__}", None))
        visit, leave = hooks
        if visit is None or visit(self, node) is not False:
            for child in _children(node):
                self.walk(child)
        if leave is not None:
            leave(self, node)


class _Collector(_Walker):
    def __init__(self, module: str, is_package: bool) -> None:
        self.module = module
        self.is_package = is_package
        self.root = Scope("module", None)
        self.scope = self.root
        self.classes: list[ClassInfo] = []
        self.withs: list[WithContext] = []
        self.calls: list[CallSite] = []
        self.attr_stores: list[tuple[cst.Attribute, Scope]] = []
        self.functions: list[tuple[cst.FunctionDef, Scope]] = []

    # imports -------------------------------------------------------
    def _relative_base(self, level: int, module: str | None) -> str | None:
        return relative_base(self.module, self.is_package, level, module)

    def visit_Import(self, node: cst.Import) -> bool:
        for alias in node.names:
            full = _dotted(alias.name)
            if not full:
                continue
            if alias.asname is not None:
                self.scope.bind(alias.asname.name.value, Binding("import", self.scope, full))
            else:
                top = full.split(".")[0]
                self.scope.bind(top, Binding("import", self.scope, top))
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        mod = _dotted(node.module) if node.module is not None else None
        if node.relative:
            mod = self._relative_base(len(node.relative), mod)
        if mod is None or isinstance(node.names, cst.ImportStar):
            return False
        for alias in node.names:
            name = _dotted(alias.name)
            if not name:
                continue
            local = alias.asname.name.value if alias.asname is not None else name
            self.scope.bind(local, Binding("import", self.scope, f"{mod}.{name}"))
        return False

    # defs ------------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        info = ClassInfo(node.name.value, bases=tuple(a.value for a in node.bases if a.keyword is None))
        self.scope.bind(node.name.value, Binding("class", self.scope, cls=info))
        self.classes.append(info)
        self.scope = Scope("class", self.scope, cls=info)
        return True

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self.scope = self.scope.parent

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        outer = self.scope
        outer.bind(node.name.value, Binding("def", outer))
        if outer.kind == "class":
            outer.cls.methods.add(node.name.value)
        for dec in node.decorators:
            self.walk(dec)
        scope = Scope("function", outer)
        params = node.params
        ordered = [*params.posonly_params, *params.params]
        if outer.kind == "class" and ordered:
            is_static = any(_dotted(d.decorator) == "staticmethod" for d in node.decorators)
            if not is_static:
                scope.cls = outer.cls
                scope.self_name = ordered[0].name.value
        for p in [*ordered, *params.kwonly_params]:
            if p.default is not None:
                self.walk(p.default)
            scope.bind(p.name.value, Binding("param", scope, value=p.default))
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                scope.bind(star.name.value, Binding("other", scope))
        # walk the body in the new scope (lexical parent: skip class scopes when resolving)
        self.functions.append((node, scope))
        self.scope, withs, self.withs = scope, self.withs, []  # a def under `with` runs elsewhere
        self.walk(node.body)
        self.scope, self.withs = outer, withs
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    # assignments -----------------------------------------------------
    def _bind_target(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        if isinstance(target, cst.Name):
            self.scope.bind(target.value, Binding("assign" if value is not None else "other",
                                                  self.scope, value=value))
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                inner = el.value.value if isinstance(el, cst.StarredElement) else el.value
                self._bind_target(inner, None)
        elif isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
            sl = target.slice
            if len(sl) == 1 and isinstance(sl[0].slice, cst.Index) and value is not None:
                self.scope.stores.setdefault(target.value.value, []).append((sl[0].slice.value, value))
        elif isinstance(target, cst.Attribute) and value is not None:
            self.attr_stores.append((target, self.scope))
            if (isinstance(target.value, cst.Name) and self.scope.self_name
                    and target.value.value == self.scope.self_name and self.scope.cls is not None):
                self.scope.cls.attrs.setdefault(target.attr.value, []).append((value, self.scope))

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._bind_target(t.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind_target(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):
            self.scope.bind(node.target.value, Binding("other", self.scope))

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind_target(node.target, node.value)

    def visit_For(self, node: cst.For) -> None:
        self._bind_target(node.target, None)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind_target(node.target, None)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None and isinstance(node.name.name, cst.Name):
            self.scope.bind(node.name.name.value, Binding("other", self.scope))

    def visit_Global(self, node: cst.Global) -> None:
        for n in node.names:
            self.scope.bind(n.name.value, Binding("other", self.scope))

    # with and calls --------------------------------------------------
    def visit_With(self, node: cst.With) -> bool:
        for item in node.items:
            self.walk(item.item)
            if item.asname is not None:
                self._bind_target(item.asname.name, None)
        pushed = 0
        for item in node.items:
            if isinstance(item.item, cst.Call):
                self.withs.append(WithContext(item.item, self.scope))
                pushed += 1
        self.walk(node.body)
        for _ in range(pushed):
            self.withs.pop()
        return False

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(CallSite(node, self.scope, tuple(self.withs)))


# ------------------------------------------------------------------ the index


_MAX_DEPTH = 8


class ModuleIndex:
    """Bindings and calls of one module, and the resolvers rules use."""

    def __init__(self, tree: cst.Module, path: Path | None = None, module: str | None = None) -> None:
        mod = module_name(path) if module is None else module
        is_package = path is not None and Path(path).name == "__init__.py"
        c = _Collector(mod, is_package)
        c.walk(tree)
        self.tree = tree
        self.module = mod
        self.root = c.root
        self.calls = c.calls
        self.classes = c.classes
        self.functions = c.functions
        self._targets: dict[int, frozenset[str]] = {}

    # scopes ---------------------------------------------------------
    @staticmethod
    def _lookup(name: str, scope: Scope) -> list[Binding] | None:
        s: Scope | None = scope
        first = True
        while s is not None:
            if (s.kind != "class" or first) and name in s.bindings:
                return s.bindings[name]
            first = False
            s = s.parent
        return None

    def targets(self, site: CallSite) -> frozenset[str]:
        """What a call's function resolves to (memoised: every rule asks)."""
        got = self._targets.get(id(site.node))
        if got is None:
            got = self._targets[id(site.node)] = self.resolve(site.node.func, site.scope)
        return got

    def subclassed(self, site: CallSite) -> frozenset[str]:
        """For a call of a class the module defines, what its bases resolve to: `class
        StageEngine(Engine)` ... `StageEngine(**config)` hands config to Engine's constructor (the
        twelfth held-out round's miss). An `__init__` of the subclass is not looked at: narrowing
        (narrow.py) may have left the class body out, and one that renames arguments is rare."""
        func = site.node.func
        bindings = self._lookup(func.value, site.scope) if isinstance(func, cst.Name) else None
        if not bindings or len(bindings) != 1 or bindings[0].cls is None:
            return frozenset()
        out: set[str] = set()
        for base in bindings[0].cls.bases:
            out |= self.resolve(base, bindings[0].scope)
        return frozenset(out)

    # what a name or attribute refers to -------------------------------
    def resolve(self, expr: cst.BaseExpression, scope: Scope, depth: int = 0) -> frozenset[str]:
        """The qualified names `expr` may refer to; empty when unknown or locally defined."""
        if depth > _MAX_DEPTH:
            return frozenset()
        if isinstance(expr, cst.Name):
            bindings = self._lookup(expr.value, scope)
            if not bindings:
                return frozenset()
            out: set[str] = set()
            for b in bindings:
                if b.kind == "import":
                    out.add(b.qualname)
                elif b.kind == "assign" and isinstance(b.value, (cst.Name, cst.Attribute)):
                    got = self.resolve(b.value, b.scope, depth + 1)
                    if not got:
                        return frozenset()
                    out |= got
                else:
                    return frozenset()  # a local def, class, parameter or other value shadows it
            return frozenset(out)
        if isinstance(expr, cst.Attribute):
            attr = expr.attr.value
            base = expr.value
            if isinstance(base, cst.Name) and scope.self_name and base.value == scope.self_name:
                cls = scope.cls
                if cls is None or attr in cls.methods or attr not in cls.attrs:
                    return frozenset()
                out = set()
                for value, vscope in cls.attrs[attr]:
                    got = self.resolve(value, vscope, depth + 1)
                    if not got:
                        return frozenset()
                    out |= got
                return frozenset(out)
            return frozenset(f"{q}.{attr}" for q in self.resolve(base, scope, depth + 1))
        return frozenset()

    # values ---------------------------------------------------------
    def value(self, expr: cst.BaseExpression | None, scope: Scope, depth: int = 0) -> object:
        """A constant, QualName, tuple, ParamValue, MAYBE_NONE or UNKNOWN for `expr`."""
        if expr is None or depth > _MAX_DEPTH:
            return UNKNOWN
        if isinstance(expr, (cst.Integer, cst.Float)):
            try:
                return expr.evaluated_value
            except (ValueError, SyntaxError):
                return UNKNOWN
        if isinstance(expr, cst.SimpleString):
            try:
                return expr.evaluated_value
            except Exception:
                return UNKNOWN
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
            v = self.value(expr.expression, scope, depth + 1)
            return -v if isinstance(v, (int, float)) and not isinstance(v, bool) else UNKNOWN
        if isinstance(expr, cst.Tuple):
            return tuple(self.value(e.value, scope, depth + 1) for e in expr.elements
                         if isinstance(e, cst.Element))
        if isinstance(expr, cst.Name):
            if expr.value in ("None", "True", "False"):
                bindings = self._lookup(expr.value, scope)
                if not bindings:
                    return {"None": None, "True": True, "False": False}[expr.value]
            bindings = self._lookup(expr.value, scope)
            if not bindings:
                return UNKNOWN
            if len(bindings) == 1 and bindings[0].kind == "param":
                b = bindings[0]
                return ParamValue(self.value(b.value, b.scope, depth + 1) if b.value is not None else UNKNOWN)
            if all(b.kind == "assign" for b in bindings):
                vals = {self._hashable(self.value(b.value, b.scope, depth + 1)) for b in bindings}
                if len(vals) == 1:
                    (v,) = vals
                    return v
                return MAYBE_NONE if None in vals else UNKNOWN
            if all(b.kind == "import" for b in bindings):
                q = self.resolve(expr, scope, depth + 1)
                return QualName(next(iter(q))) if len(q) == 1 else UNKNOWN
            return UNKNOWN
        if isinstance(expr, cst.Attribute):
            q = self.resolve(expr, scope, depth + 1)
            if len(q) == 1:
                return QualName(next(iter(q)))
            return UNKNOWN
        return UNKNOWN

    @staticmethod
    def _hashable(v: object) -> object:
        try:
            hash(v)
            return v
        except TypeError:
            return UNKNOWN

    def dict_items(self, expr: cst.BaseExpression, scope: Scope, depth: int = 0
                   ) -> list[tuple[str, cst.BaseExpression, Scope]] | None:
        """Keys and value nodes of a dict built visibly (`dict(...)`, `{...}` with `**other` of
        such a dict, `d[k] = v`), each key once with the value that wins (the last)."""
        items = self._dict_items(expr, scope, depth)
        if items is None:
            return None
        last = {key: (key, value, vscope) for key, value, vscope in items}
        return list(last.values())

    def _dict_items(self, expr, scope: Scope, depth: int) -> list[tuple[str, cst.BaseExpression, Scope]] | None:
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, cst.Dict):
            out = []
            for el in expr.elements:
                if isinstance(el, cst.StarredDictElement):
                    spread = self._dict_items(el.value, scope, depth + 1)
                    if spread is None:
                        return None
                    out += spread
                    continue
                key = self.value(el.key, scope, depth + 1)
                if not isinstance(key, str):
                    return None
                out.append((key, el.value, scope))
            return out
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "dict" \
                and not self._lookup("dict", scope):
            out = []
            for a in expr.args:
                if a.keyword is None:
                    return None
                out.append((a.keyword.value, a.value, scope))
            return out
        if isinstance(expr, cst.Name):
            bindings = self._lookup(expr.value, scope)
            if not bindings or len(bindings) != 1 or bindings[0].kind != "assign":
                return None
            b = bindings[0]
            base = self._dict_items(b.value, b.scope, depth + 1)
            if base is None:
                return None
            extra = []
            for key_node, value in b.scope.stores.get(expr.value, []):
                key = self.value(key_node, b.scope, depth + 1)
                if not isinstance(key, str):
                    return None
                extra.append((key, value, b.scope))
            return base + extra
        return None

    # calls ----------------------------------------------------------
    def bind_args(self, site: CallSite, positional: tuple[str, ...] = ()) -> "CallArgs":
        return CallArgs(self, site, positional)


class CallArgs:
    """The arguments of one call, with `**` dicts expanded where they are visible."""

    def __init__(self, index: ModuleIndex, site: CallSite, positional: tuple[str, ...]) -> None:
        self.index = index
        self.site = site
        self.given: dict[str, tuple[cst.BaseExpression, Scope, cst.CSTNode]] = {}
        self.opaque = False  # an unknown ** or * may pass anything
        pos_i = 0
        for a in site.node.args:
            if a.keyword is not None:
                self.given[a.keyword.value] = (a.value, site.scope, a)
            elif a.star == "**":
                items = index.dict_items(a.value, site.scope)
                if items is None:
                    self.opaque = True
                else:
                    for key, value, vscope in items:
                        self.given.setdefault(key, (value, vscope, a))
            elif a.star == "*":
                self.opaque = True
                pos_i = len(positional)  # later positionals are unknown
            else:
                if pos_i < len(positional):
                    self.given[positional[pos_i]] = (a.value, site.scope, a)
                pos_i += 1

    def __getitem__(self, name: str) -> Arg:
        if name not in self.given:
            return Arg(MAYBE if self.opaque else ABSENT)
        expr, scope, node = self.given[name]
        v = self.index.value(expr, scope)
        if v is None:
            return Arg(ABSENT, None, node)
        if isinstance(v, ParamValue):
            # a forwarded parameter: None by default means "only when the caller passes it"
            return Arg(MAYBE if v.default is None else PRESENT, UNKNOWN, node)
        if v is MAYBE_NONE:  # None on some path
            return Arg(MAYBE, UNKNOWN, node)
        return Arg(PRESENT, v, node)

    def expr(self, name: str) -> tuple[cst.BaseExpression, Scope] | None:
        got = self.given.get(name)
        return (got[0], got[1]) if got else None

    def passed(self, name: str) -> bool:
        return self[name].state == PRESENT


# ------------------------------------------------------------------ tensors

_FACTORIES = frozenset(f"torch.{f}" for f in ("randn", "rand", "empty", "zeros", "ones", "full"))


@dataclass(frozen=True)
class TensorFacts:
    last_dim: int | None = None
    dtype: str | None = None  # qualified name, e.g. torch.float8_e4m3fn


def tensor_facts(index: ModuleIndex, expr: cst.BaseExpression | None, scope: Scope,
                 depth: int = 0) -> TensorFacts:
    """Last dimension and dtype of a tensor built visibly: torch.randn/empty/zeros/ones/full(...),
    optionally followed by .to(dtype); names are followed to their single assignment."""
    if expr is None or depth > _MAX_DEPTH:
        return TensorFacts()
    if isinstance(expr, cst.Name):
        bindings = index._lookup(expr.value, scope)
        if bindings and len(bindings) == 1 and bindings[0].kind == "assign":
            return tensor_facts(index, bindings[0].value, bindings[0].scope, depth + 1)
        return TensorFacts()
    if not isinstance(expr, cst.Call):
        return TensorFacts()
    func = expr.func
    if isinstance(func, cst.Attribute) and func.attr.value == "to" and not index.resolve(func, scope):
        base = tensor_facts(index, func.value, scope, depth + 1)
        for a in expr.args:
            if a.keyword is None or a.keyword.value == "dtype":
                v = index.value(a.value, scope)
                if isinstance(v, QualName) and v.name.startswith("torch."):
                    return TensorFacts(base.last_dim, v.name)
        return base
    targets = index.resolve(func, scope)
    if len(targets) != 1 or next(iter(targets)) not in _FACTORIES:
        return TensorFacts()
    positional = [a for a in expr.args if a.keyword is None and not a.star]
    if next(iter(targets)) == "torch.full" and positional:
        positional = positional[:1]
    dims = positional
    if len(positional) == 1 and isinstance(positional[0].value, (cst.Tuple, cst.List)):
        dims = [e for e in positional[0].value.elements]
    last = index.value(dims[-1].value, scope) if dims else UNKNOWN
    dtype = None
    for a in expr.args:
        if a.keyword is not None and a.keyword.value == "dtype":
            v = index.value(a.value, scope)
            dtype = v.name if isinstance(v, QualName) else None
    return TensorFacts(last if type(last) is int else None, dtype)
