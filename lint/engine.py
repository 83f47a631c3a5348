"""Lint one source: prefilter, parse, run the rules, apply inline suppressions.

Inline suppression, on the line a finding is reported at:

    out = flash_attn_with_kvcache(q, kc, vc, k=k)  # errkb: ignore[EKB101]
    out = flash_attn_with_kvcache(q, kc, vc, k=k)  # errkb: ignore        (every rule)
"""

from __future__ import annotations

import ast
import json
import re
import sys
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from errkb import layout
from errkb.lint.analysis import ModuleIndex, module_name
from errkb.lint.commands import is_command_file, lint_commands
from errkb.lint.rule import DEFAULT_ARCHS, LintContext, Rule, all_rules

UNUSED_SUPPRESSION = "EKB000"
MAX_BYTES = 5 * 1024 * 1024
_SUPPRESS = re.compile(rb"#\s*errkb:\s*ignore(?:\[([A-Za-z0-9_,\s-]*)\])?")


@dataclass(frozen=True, order=True)
class Finding:
    path: str
    line: int  # 1-based
    col: int  # 1-based
    rule: str
    name: str
    record_id: str
    message: str
    end_line: int = 0
    end_col: int = 0

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    skipped: str | None = None  # why the file was not linted (reported, never fatal)


@dataclass(frozen=True)
class RecordText:
    error_class: str
    message: str
    template: str


def load_record_texts(data_dir: Path) -> dict[str, RecordText]:
    """Upstream wording of every record a rule links to, read from the dataset."""
    wanted = {r for rule in all_rules().values() for r in rule.RECORDS}
    out = {}
    for path in layout.record_paths(data_dir):
        if path.stem in wanted:
            rec = json.loads(path.read_text())
            out[rec["id"]] = RecordText(rec["error_class"], rec["message"], rec["template"])
    return out


class _Params(dict):
    def __missing__(self, key):
        raise KeyError(key)


def render(report, texts: dict[str, RecordText]) -> str:
    rec = texts.get(report.record)
    if rec is None:
        words, cls = report.text or report.record, "Error"
    else:
        cls = rec.error_class
        words = report.text
        if words is None:
            try:
                words = rec.template.format_map(_Params(report.params))
            except (KeyError, IndexError, ValueError):
                words = rec.message
    hint = f"; {report.hint}" if report.hint else ""
    return f"{cls}: {words} (errkb record {report.record}{hint})"


def prefilter_tokens(rules: list[Rule]) -> tuple[tuple[bytes, ...], ...]:
    return tuple(sorted({t for r in rules for t in r.PREFILTER}))


_ANCHORS: dict[tuple, tuple[bytes, ...]] = {}


def may_match(source: bytes, tokens: tuple[tuple[bytes, ...], ...]) -> bool:
    """The byte-level prefilter: some rule's tokens all occur in the file. A few scans for the
    10-byte prefixes of the names first (most files have none), then the whole groups."""
    anchors = _ANCHORS.get(tokens)
    if anchors is None:
        anchors = _ANCHORS[tokens] = tuple(sorted({g[0][:10] for g in tokens}))
    if not any(a in source for a in anchors):
        return False
    return any(all(t in source for t in group) for group in tokens)


def suppressions(source: bytes) -> dict[int, set[str] | None]:
    """line -> suppressed rule codes (None: all rules)."""
    out: dict[int, set[str] | None] = {}
    if b"errkb:" not in source:
        return out
    for lineno, line in enumerate(source.splitlines(), 1):
        m = _SUPPRESS.search(line)
        if m:
            codes = m.group(1)
            out[lineno] = None if codes is None else {c.strip().decode() for c in codes.split(b",") if c.strip()}
    return out


PARSER_DEPTH = 10_000  # generated code nests deep; this much is safe for the C stack and for libcst


def _too_deep_for_the_parser(source: bytes) -> str | None:
    """Why libcst must not see this file, or None. Its native parser recurses on the C stack and
    dies (SIGSEGV) on thousands of nested brackets or unary operators, and crawls on a huge
    chain of binary operators; CPython's own parser refuses all three quickly and safely, and
    Python could not run such a file anyway."""
    try:
        with _deep_recursion(PARSER_DEPTH):
            ast.parse(source)
    except (RecursionError, MemoryError):
        return "too deeply nested to parse"
    except SyntaxError as exc:
        if "too many nested" in str(exc) or "too complex" in str(exc):
            return "too deeply nested to parse"
    except ValueError:  # null bytes and the like: libcst reports them in its own words
        pass
    return None


@contextmanager
def _deep_recursion(limit: int = 60000):
    """Long generated expressions nest deeply and the analysis recurses over them (Python-to-
    Python calls use no C stack on 3.11+); the process's own limit is put back afterwards."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, limit))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def lint_source(source: bytes, path: str, rules: list[Rule], archs=DEFAULT_ARCHS,
                texts: dict[str, RecordText] | None = None, module: str | None = None,
                report_unused: bool = False, tokens: tuple[tuple[bytes, ...], ...] | None = None,
                versions: dict[str, str] | None = None) -> FileResult:
    """Findings for one file's bytes; never raises on bad input (the result says why it skipped)."""
    texts = texts or {}
    result = FileResult(path)
    if not source.strip():
        return result
    if len(source) > MAX_BYTES:
        result.skipped = f"larger than {MAX_BYTES} bytes"
        return result
    if b"\0" in source:
        result.skipped = "binary file"
        return result
    tokens = prefilter_tokens(rules) if tokens is None else tokens
    wants_unused = report_unused and b"errkb:" in source
    if not wants_unused and not may_match(source, tokens):
        return result
    if not path.endswith(".py") and is_command_file(path):  # scripts, Dockerfiles, YAML: launch commands
        return lint_commands(source, path, rules, archs, texts, versions, report_unused)
    if problem := _too_deep_for_the_parser(source):
        result.skipped = problem
        return result
    try:
        tree = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        result.skipped = f"syntax error at line {exc.raw_line}, column {exc.raw_column}"
        return result
    except (UnicodeDecodeError, LookupError, SyntaxError, ValueError) as exc:
        result.skipped = f"cannot decode: {type(exc).__name__}"
        return result
    except RecursionError:
        result.skipped = "too deeply nested to parse"
        return result
    reports = []
    try:
        with _deep_recursion():
            index = ModuleIndex(tree, Path(path), module=module)
            ctx = LintContext(index, tuple(archs), dict(versions or {}))
            for rule in rules:
                reports.extend((rule, r) for r in rule.run(ctx))
    except RecursionError:
        result.skipped = "too deeply nested to analyse"
        return result
    sup = suppressions(source) if (reports or wants_unused) else {}
    used: dict[int, set[str]] = {}
    findings = []
    if reports:
        try:
            with _deep_recursion():
                positions = MetadataWrapper(tree, unsafe_skip_copy=True).resolve(PositionProvider)
        except RecursionError:
            result.skipped = "too deeply nested to locate findings"
            return result
        for rule, rep in reports:
            pos = positions[rep.node]
            line = pos.start.line
            codes = sup.get(line, ())
            if line in sup and (codes is None or rule.CODE in codes):
                used.setdefault(line, set()).add(rule.CODE)
                continue
            findings.append(Finding(path, line, pos.start.column + 1, rule.CODE, rule.NAME, rep.record,
                                    render(rep, texts), pos.end.line, pos.end.column + 1))
    if report_unused:
        for line, codes in sup.items():
            hit = used.get(line, set())
            unused = ([] if hit else ["*"]) if codes is None else sorted(codes - hit)
            if unused:
                what = "errkb: ignore" if codes is None else f"errkb: ignore[{', '.join(unused)}]"
                findings.append(Finding(path, line, 1, UNUSED_SUPPRESSION, "unused-suppression", "",
                                        f"unused suppression: `{what}` silences nothing on this line"))
    result.findings = sorted(set(findings))
    return result


def lint_text(code: str, archs=DEFAULT_ARCHS, select: list[str] | None = None,
              path: str = "example.py", versions: dict[str, str] | None = None) -> list[Finding]:
    """Convenience for tests and docs: lint a snippet with every (or the selected) rule."""
    from errkb import store

    rules = [cls() for code_, cls in all_rules().items() if select is None or code_ in select]
    texts = _default_texts.get("t")
    if texts is None:
        texts = _default_texts["t"] = load_record_texts(store.default_data_dir())
    return lint_source(code.encode(), path, rules, archs, texts, module="example", versions=versions).findings


_default_texts: dict = {}


__all__ = ["Finding", "FileResult", "lint_source", "lint_text", "load_record_texts", "module_name"]
