"""Find user-visible messages in C++/CUDA source.

Understands the check macros people paste from: TORCH_CHECK (and its _VALUE/_NOT_IMPLEMENTED/
_INDEX/_TYPE variants), TORCH_WARN, FLASHINFER_CHECK/ERROR/WARN, TVM_FFI_ICHECK* and
TVM_FFI_THROW with `<<` chains, AT_ERROR, and `throw std::...(...)`. A project macro whose body
calls one of these (FlashAttention's `CHECK_SHAPE(x, ...)`) is expanded at each call, with
`#x` stringised, because the expanded text is what users see. A message streamed into an
`std::ostringstream` and then thrown (`FLASHINFER_ERROR(err.str())`) is followed back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from errkb.harvest.python_sites import RawSite
from errkb.templates import escape, placeholder_name as name_for_source

CHECK_CLASSES = {
    "TORCH_CHECK": "RuntimeError",
    "TORCH_CHECK_VALUE": "ValueError",
    "TORCH_CHECK_NOT_IMPLEMENTED": "NotImplementedError",
    "TORCH_CHECK_INDEX": "IndexError",
    "TORCH_CHECK_TYPE": "TypeError",
    "TORCH_CHECK_LINALG": "RuntimeError",
    "STD_TORCH_CHECK": "RuntimeError",
    "TORCH_INTERNAL_ASSERT": "RuntimeError",
    "FLASHINFER_CHECK": "RuntimeError",
    "FLASHINFER_ERROR": "RuntimeError",
    "AT_ERROR": "RuntimeError",
}
WARN_MACROS = {"TORCH_WARN": "UserWarning", "TORCH_WARN_ONCE": "UserWarning", "FLASHINFER_WARN": "UserWarning"}
# TVM-FFI checks carry their message in a `<< ...` chain after the call.
STREAM_CHECKS = re.compile(r"^TVM_FFI_(?:ICHECK(?:_EQ|_NE|_LT|_LE|_GT|_GE|_NOTNULL)?|CHECK)$")
# tvm-ffi raises an error kind as the Python class registered under that name (apache-tvm-ffi 0.1.x,
# tvm_ffi/error.py) and every other kind, such as TVM_FFI_ICHECK's InternalError, as RuntimeError
# (tvm_ffi/cython/error.pxi: ERROR_NAME_TO_TYPE.get(kind, RuntimeError)); seen so on an H200.
TVM_FFI_PYTHON_CLASSES = {"RuntimeError", "ValueError", "TypeError", "AttributeError", "KeyError", "IndexError",
                          "AssertionError", "MemoryError"}
THROW_CLASSES = {"invalid_argument": "ValueError", "out_of_range": "IndexError", "runtime_error": "RuntimeError",
                 "logic_error": "RuntimeError", "domain_error": "ValueError", "length_error": "ValueError"}

_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")  # any call; only checks and raising macros are read
_THROW = re.compile(r"\bthrow\s+((?:std::)?\w+(?:::\w+)*)\s*\(")
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)\(([^)]*)\)((?:[^\n]*\\\n)*[^\n]*)", re.M)
_KNOWN_CHECK_CALL = re.compile(r"\b(?:" + "|".join((*CHECK_CLASSES, *WARN_MACROS)) + r")\s*\(")
_STRING = re.compile(r'(?:u8|u|U|L)?"((?:[^"\\\n]|\\.)*)"')
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "'": "'", "\\": "\\", "0": ""}


@dataclass(frozen=True)
class Macro:
    params: tuple[str, ...]
    body: str


def strip_comments(text: str) -> str:
    """Blank out comments, keeping strings and every newline (so line numbers hold)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"' or c == "'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch for ch in text[i:j] if ch == "\n"))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _outside_strings(text: str, start: int = 0):
    """(index, char, bracket depth after it) for each character outside string and char literals."""
    depth, i, n = 0, start, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        yield i, c, depth
        i += 1


def _blank_strings(text: str) -> str:
    """The text with the inside of every string and char literal blanked (same length), so a
    name inside a message (the `"CHECK_EQ("` a CHECK_EQ macro prints) is never read as a call."""
    out, pos = [], 0
    for i, _c, _depth in _outside_strings(text):
        if i > pos:
            out.append(" " * (i - pos))
        out.append(text[i])
        pos = i + 1
    out.append(" " * (len(text) - pos))
    return "".join(out)


def _balanced(text: str, start: int) -> int:
    """Index just past the ')' matching the '(' at text[start], or -1."""
    for i, c, depth in _outside_strings(text, start):
        if depth == 0 and c in ")]}":
            return i + 1
    return -1


def _split_top(text: str, sep: str) -> list[str]:
    """Split on `sep` where it is not inside brackets or strings (templates' <...> is ignored)."""
    parts, last = [], 0
    for i, c, depth in _outside_strings(text):
        if depth == 0 and i >= last and c not in ")]}" and text.startswith(sep, i):
            parts.append(text[last:i])
            last = i + len(sep)
    parts.append(text[last:])
    return [p.strip() for p in parts]


def _unescape(s: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), s)


def _name_for(expr: str) -> str:
    """A placeholder name for a printed expression, conversions left out: `int(cond)` -> `cond`."""
    return name_for_source(re.sub(r"^(?:std::to_string|int|static_cast<[\w:]+>)\((.*)\)$", r"\1", expr.strip()))


def _template(items: list[str]) -> str | None:
    """Concatenate message pieces: string literals are text, anything else a placeholder."""
    parts: list[str] = []
    names: dict[str, str] = {}
    for item in items:
        if not item:
            continue
        literals = _STRING.findall(item)
        if literals and _STRING.sub("", item).strip() == "":
            parts.append(escape("".join(_unescape(s) for s in literals)))
            continue
        if re.fullmatch(r"-?\d+(?:\.\d+)?[uUlLfF]*", item):
            parts.append(item.rstrip("uUlLfF"))
            continue
        if item in names:
            parts.append("{" + names[item] + "}")
            continue
        base = _name_for(item)
        name, k = base, 2
        while name in names.values():
            name, k = f"{base}_{k}", k + 1
        names[item] = name
        parts.append("{" + name + "}")
    template = "".join(parts).strip()
    literal = re.sub(r"\{[^{}]*\}", "", template)
    return template if re.search(r"[A-Za-z]{3}", literal) else None


def define_macros(text: str) -> dict[str, Macro]:
    """Every function-like macro the text defines (the known checks themselves left out)."""
    macros: dict[str, Macro] = {}
    for m in _DEFINE.finditer(strip_comments(text)):
        name, params, body = m.group(1), m.group(2), m.group(3).replace("\\\n", " ")
        if name in CHECK_CLASSES or name in WARN_MACROS or name.startswith("TVM_FFI"):
            continue
        macros[name] = Macro(tuple(p.strip() for p in params.split(",") if p.strip()), body.strip())
    return macros


def raises_directly(macro: Macro) -> bool:
    """Whether the macro's body raises or warns through a known check or `throw`."""
    return "throw " in macro.body or bool(_KNOWN_CHECK_CALL.search(macro.body))


def raising_macros(macros: dict[str, Macro]) -> dict[str, Macro]:
    """The macros that raise or warn: through a known check or `throw`, or through another
    macro that does (FlashInfer's `DISPATCH_head_dim(...)` calls `_DISPATCH_SWITCH("head_dim", ...)`,
    whose default case throws "... failed to dispatch head_dim 80"), to any depth."""
    raising = {name: macro for name, macro in macros.items() if raises_directly(macro)}
    while True:
        calling = re.compile(r"\b(?:" + "|".join(map(re.escape, raising)) + r")\s*\(") if raising else None
        calls = {name: macro for name, macro in macros.items()
                 if name not in raising and calling and calling.search(macro.body)}
        if not calls:
            return raising
        raising.update(calls)


def collect_macros(text: str) -> dict[str, Macro]:
    """Function-like macros of one text whose body raises or warns (see raising_macros)."""
    return raising_macros(define_macros(text))


def _expand(macro: Macro, args: list[str]) -> str:
    named = [p for p in macro.params if p != "..."]
    values = dict(zip(named, args))
    varargs = ", ".join(args[len(named):]) if "..." in macro.params else ""

    def quote(s: str) -> str:
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'

    body = re.sub(r"#\s*__VA_ARGS__", lambda _: quote(varargs), macro.body)
    body = re.sub(r"(?<!#)#\s*(\w+)", lambda m: quote(values.get(m.group(1), m.group(1))), body)
    body = re.sub(r"##\s*__VA_ARGS__|\b__VA_ARGS__\b", lambda _: varargs, body)
    return re.sub(r"\b(\w+)\b", lambda m: values.get(m.group(1), m.group(1)), body)


def _ostream_chain(text: str, before: int, var: str) -> list[str] | None:
    """Items streamed into `var` (`var << a << b;`) in the code just before `before`."""
    window = text[max(0, before - 4000):before]
    chains = list(re.finditer(rf"\b{re.escape(var)}\s*<<(.*?);", window, re.S))
    if not chains:
        return None
    return _split_top(chains[-1].group(1), "<<")


class _FileScan:
    def __init__(self, path: str, text: str, macros: dict[str, Macro]) -> None:
        self.path = path
        self.text = strip_comments(text)
        # Directive lines would otherwise be read as calls (the macros' own bodies).
        self.text = re.sub(r"^[ \t]*#[ \t]*define[^\n]*(?:\\\n[^\n]*)*",
                           lambda m: "\n" * m.group(0).count("\n"), self.text, flags=re.M)
        self.macros = macros
        self.sites: list[RawSite] = []

    def line_of(self, pos: int) -> int:
        return self.text.count("\n", 0, pos) + 1

    def function_at(self, pos: int) -> str | None:
        heads = list(re.finditer(r"\b(\w+)\s*\([^;{}]*\)\s*(?:const\s*)?\{", self.text[max(0, pos - 20000):pos]))
        keywords = {"if", "for", "while", "switch", "catch", "return", "sizeof", "do"}
        for head in reversed(heads):
            if head.group(1) not in keywords and not head.group(1).isupper():
                return head.group(1)
        return None

    def scan(self, text: str | None = None, line: int | None = None, depth: int = 0) -> None:
        src = self.text if text is None else text
        code = _blank_strings(src)
        for m in _CALL.finditer(code):
            name = m.group(1)
            if not (name in self.macros or name in CHECK_CLASSES or name in WARN_MACROS
                    or name == "TVM_FFI_THROW" or STREAM_CHECKS.match(name)):
                continue
            end = _balanced(src, m.end() - 1)
            if end < 0:
                continue
            args = _split_top(src[m.end():end - 1], ",")
            at = line if line is not None else self.line_of(m.start())
            if name in self.macros and depth < 3:
                # A code block passed in (a dispatch macro's lambda) is scanned where it is
                # written, not again inside the expansion under the macro's line.
                args = ["__code__" if "{" in arg else arg for arg in args]
                self.scan(_expand(self.macros[name], args), at, depth + 1)
            elif name in CHECK_CLASSES or name in WARN_MACROS:
                self._check(name, args, src, m.start(), line)
            elif STREAM_CHECKS.match(name) or name == "TVM_FFI_THROW":
                self._stream(name, args, src, end, line, m.start())
        for m in _THROW.finditer(code):
            end = _balanced(src, m.end() - 1)
            if end < 0:
                continue
            cls = m.group(1).split("::")[-1]
            args = _split_top(src[m.end():end - 1], ",")
            items = _split_top(args[0], "+") if args else []
            self._add(m.start(), line, "throw", THROW_CLASSES.get(cls, cls), self._message(items, src, m.start()))

    def _message(self, items: list[str], src: str, pos: int) -> str | None:
        if len(items) == 1 and (m := re.fullmatch(r"(\w+)\.str\(\)", items[0])):
            chain = _ostream_chain(src, pos, m.group(1))
            return _template(chain) if chain else None
        return _template(items)

    def _check(self, name: str, args: list[str], src: str, pos: int, line: int | None) -> None:
        if name in WARN_MACROS:
            self._add(pos, line, "check-warning", WARN_MACROS[name], self._message(args, src, pos))
        elif name in ("FLASHINFER_ERROR", "AT_ERROR"):
            self._add(pos, line, "check", CHECK_CLASSES[name], self._message(args, src, pos))
        elif len(args) >= 2:
            self._add(pos, line, "check", CHECK_CLASSES[name], self._message(args[1:], src, pos))
        elif name.startswith("TORCH_CHECK") and args and args[0]:
            # TORCH_CHECK(cond) with no message prints the condition itself.
            cond = re.sub(r"\s+", " ", args[0])
            self._add(pos, line, "check", CHECK_CLASSES[name],
                      escape(f"Expected {cond} to be true, but got false."))
        elif name == "FLASHINFER_CHECK" and args and args[0]:
            # So does FlashInfer's variadic FLASHINFER_CHECK(cond) (include/flashinfer/exception.h).
            self._add(pos, line, "check", CHECK_CLASSES[name], escape("Check failed: " + re.sub(r"\s+", " ", args[0])))

    def _stream(self, name: str, args: list[str], src: str, end: int, line: int | None, pos: int) -> None:
        rest = src[end:end + 4000]
        chain = re.match(r"\s*<<(.*?);", rest, re.S)
        if not chain:
            return
        kind = args[0] if name == "TVM_FFI_THROW" and args else args[1] if name == "TVM_FFI_CHECK" and len(args) > 1 else ""
        cls = kind.strip() if kind.strip() in TVM_FFI_PYTHON_CLASSES else "RuntimeError"
        self._add(pos, line, "check", cls, _template(_split_top(chain.group(1), "<<")))

    def _add(self, pos: int, line: int | None, kind: str, cls: str | None, template: str | None) -> None:
        if template:
            at = line if line is not None else self.line_of(pos)
            self.sites.append(RawSite(self.path, at, "cpp", kind, cls, template, self.function_at(pos) if line is None else None))


def extract(path: str, text: str, macros: dict[str, Macro]) -> list[RawSite]:
    scan = _FileScan(path, text, macros)
    scan.scan()
    return scan.sites
