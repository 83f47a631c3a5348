"""Lint one source: prefilter, parse, run the rules, apply inline suppressions.

Inline suppression, on any line of the statement a finding is reported in:

    out = flash_attn_with_kvcache(q, kc, vc, k=k)  # errkb: ignore[EKB101]
    out = flash_attn_with_kvcache(q, kc, vc, k=k)  # errkb: ignore        (every rule)
    out = flash_attn_with_kvcache(  # errkb: ignore[EKB101]
        q, kc, vc, k=k)
"""

from __future__ import annotations

import ast
import functools
import gc
import io
import re
import sys
import tokenize
from contextlib import contextmanager
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from errkb.lint.analysis import ModuleIndex, module_name
from errkb.lint.archs import ASSUMED_NOTE, FileArchs, file_archs
from errkb.lint.commands import lint_commands
from errkb.lint.filekinds import is_command_file
from errkb.lint.edits import resolve
from errkb.lint.fixes import decode_source, line_starts
from errkb.lint.prefilter import Tokens, may_match, tokens_of
from errkb.lint.results import MAX_BYTES, UNUSED_SUPPRESSION, FileResult, Finding, RecordText, unused_suppressions
from errkb.lint.rule import DEFAULT_ARCHS, LintContext, Rule, all_rules, arch_reports
from errkb.lint import narrow
from errkb.lint.pyfacts import ModuleFacts
from errkb.lint.screen import candidates, narrowable
from errkb.lint.table import RecordTexts

_SUPPRESS = re.compile(rb"#\s*errkb:\s*ignore(?:\[([A-Za-z0-9_,\s-]*)\])?")


def load_record_texts(data_dir: Path) -> dict[str, RecordText]:
    """Upstream wording of every record a rule links to, read from the dataset."""
    return RecordTexts(data_dir, {r for rule in all_rules().values() for r in rule.RECORDS}).load()


class _Params(dict):
    def __missing__(self, key):
        raise KeyError(key)


def render(report, texts: dict[str, RecordText], note: str = "") -> str:
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
    note = f"; {note}" if note else ""
    return f"{cls}: {words} (errkb record {report.record}{hint}{note})"


def assumed_note(rule: Rule, judged: FileArchs) -> str:
    """What an arch-dependent finding adds where no GPU was named (lint/archs.py ASSUMED_NOTE)."""
    return ASSUMED_NOTE if judged.assumed and rule.ARCH_DEPENDENT else ""


def prefilter_tokens(rules: list[Rule]) -> Tokens:
    return tokens_of(r.PREFILTER for r in rules)


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


def statement_lines(source: bytes) -> dict[int, range]:
    """line -> the lines of the logical line (statement, or compound statement header) it is
    part of, for lines in statements that span several lines. A multi-line call, bracketed
    expression, backslash continuation or triple-quoted string is one logical line."""
    out: dict[int, range] = {}
    start = None
    try:
        for tok in tokenize.tokenize(io.BytesIO(source).readline):
            if tok.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                if start is not None and tok.end[0] > start:
                    span = range(start, tok.end[0] + 1)
                    out.update(dict.fromkeys(span, span))
                start = None
            elif start is None and tok.type not in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT,
                                                     tokenize.DEDENT, tokenize.ENCODING):
                start = tok.start[0]
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError, LookupError):
        pass  # the file parsed, so this is unexpected; suppressions then cover their own line only
    return out


def _suppressed_by(line: int, code: str, sup: dict[int, set[str] | None], spans: dict[int, range]) -> list[int]:
    """The suppression comments (their lines) that silence `code` reported on `line`."""
    return [n for n in spans.get(line, (line,)) if n in sup and (sup[n] is None or code in sup[n])]


PARSER_DEPTH = 10_000  # generated code nests deep; this much is safe for the C stack and for libcst


def _python_ast(source: bytes) -> tuple[ast.Module | None, str | None]:
    """CPython's own tree of the file (None when it does not parse), and why libcst must not see
    the file, or None. libcst's native parser recurses on the C stack and dies (SIGSEGV) on
    thousands of nested brackets or unary operators, and crawls on a huge chain of binary
    operators; CPython's parser refuses all three quickly and safely, and Python could not run
    such a file anyway. The tree then tells which rules may report at all (screen.py)."""
    try:
        with _deep_recursion(PARSER_DEPTH), _no_gc():
            return ast.parse(source), None
    except (RecursionError, MemoryError):
        return None, "too deeply nested to parse"
    except SyntaxError as exc:
        if "too many nested" in str(exc) or "too complex" in str(exc):
            return None, "too deeply nested to parse"
    except ValueError:  # null bytes and the like: libcst reports them in its own words
        pass
    return None, None


@contextmanager
def _no_gc():
    """The cyclic collector paused while CPython builds a tree: it would otherwise run every few
    hundred new nodes and scan every object the process holds (a fifth of the parse)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


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


_RAISES_METHODS = frozenset({"assertRaises", "assertRaisesRegex", "assertRaisesRegexp"})


def expects_raise(tree: ast.Module) -> list[tuple[int, int]]:
    """The line ranges of the bodies of `with pytest.raises(...)` / `with self.assertRaises(...)`
    (also assertRaisesRegex, and `raises` imported from pytest): code there is a test that the
    error happens, so a finding there has nothing to fix. Read from CPython's tree of the whole
    file, so the stages between the prefilter and libcst cannot change it."""
    bare = {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            and node.module == "pytest" for a in node.names if a.name == "raises"}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.With, ast.AsyncWith)) and node.body:
            for item in node.items:
                call = item.context_expr
                if not isinstance(call, ast.Call):
                    continue
                f = call.func
                if (isinstance(f, ast.Attribute) and (f.attr in _RAISES_METHODS or (
                        f.attr == "raises" and isinstance(f.value, ast.Name) and f.value.id == "pytest"))) \
                        or (isinstance(f, ast.Name) and f.id in bare):
                    out.append((node.body[0].lineno, node.body[-1].end_lineno or node.body[-1].lineno))
                    break
    return out


# Stages two and three (screen.py, narrow.py) on or off; off, every file that passes the byte
# prefilter is parsed whole and every rule runs. Tests and the benchmark compare the two.
SCREEN = True


def _screen(python_tree: ast.Module, source: bytes, rules: list[Rule], module: str,
            is_package: bool) -> tuple[list[Rule], bytes]:
    """(the rules that may report here, the source libcst is to parse): screen.py, then narrow.py
    unless a rule with its own run is left. Too deep a tree for them: every rule, the whole file."""
    facts = functools.cache(lambda: ModuleFacts(python_tree, module, is_package))
    try:
        with _deep_recursion():
            kept, regions, calls = candidates(python_tree, source, rules, module, is_package, facts)
            if kept and narrowable(kept):
                return kept, narrow.narrowed(source, narrow.plan(facts(), regions, calls)) or source
            return kept, source
    except RecursionError:
        return rules, source


def lint_source(source: bytes, path: str, rules: list[Rule], archs=DEFAULT_ARCHS,
                texts: dict[str, RecordText] | None = None, module: str | None = None,
                report_unused: bool = False, tokens: tuple[tuple[bytes, ...], ...] | None = None,
                versions: dict[str, str] | None = None, pinned: dict | None = None,
                screen: bool | None = None) -> FileResult:
    """Findings for one file's bytes; never raises on bad input (the result says why it skipped).
    `versions`: configured target releases; `pinned`: the project's pins (lint/pins.py); `screen`
    (default: SCREEN) turns the stages between the prefilter and libcst on or off."""
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
        return lint_commands(source, path, rules, archs, texts, versions, report_unused, pinned)
    python_tree, problem = _python_ast(source)
    if problem:
        result.skipped = problem
        return result
    if module is None:
        module = module_name(Path(path))
    parse = source
    if python_tree is not None and not wants_unused and (SCREEN if screen is None else screen):
        # (with unused suppressions reported every rule runs: any suppression may be the used one)
        rules, parse = _screen(python_tree, source, rules, module, Path(path).name == "__init__.py")
        if not rules:
            return result
    if b"aises" not in source:
        python_tree = None  # (no test of a raise: let it go before libcst builds its own tree)
    tree = None
    if parse is not source:
        try:
            tree = cst.parse_module(parse)
        except Exception:  # narrowing must never cost a finding: the whole file then
            tree = None
    try:
        if tree is None:
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
    # (judged this late because the GPU names are a scan of the whole text: most files that pass
    # the prefilter have no rule left by now)
    judged = file_archs(source, archs)  # none where the file targets ROCm or a DCU
    reports = []
    try:
        with _deep_recursion():
            index = ModuleIndex(tree, Path(path), module=module)
            ctx = LintContext(index, judged.archs, dict(versions or {}), dict(pinned or {}), judged.named)
            for rule in rules:
                reports.extend((rule, r) for r in arch_reports(rule, ctx, rule.run))
    except RecursionError:
        result.skipped = "too deeply nested to analyse"
        return result
    sup = suppressions(source) if (reports or wants_unused) else {}
    used: dict[int, set[str]] = {}
    findings = []
    if reports:
        expected = expects_raise(python_tree) if python_tree is not None else ()
        try:
            with _deep_recursion():
                positions = MetadataWrapper(tree, unsafe_skip_copy=True).resolve(PositionProvider)
        except RecursionError:
            result.skipped = "too deeply nested to locate findings"
            return result
        spans = statement_lines(source) if sup else {}
        starts = None  # where each line of the decoded source begins, once a report has a fix
        for rule, rep in reports:
            pos = positions[rep.node]
            line = pos.start.line
            if expected and any(first <= line <= last for first, last in expected):
                continue  # the code expects the call to raise (a test of the error)
            silencers = _suppressed_by(line, rule.CODE, sup, spans) if sup else ()
            for n in silencers:
                used.setdefault(n, set()).add(rule.CODE)
            if silencers:
                continue
            if rep.fix is not None and starts is None:
                starts = line_starts(decode_source(source)[0])
            findings.append(Finding(path, line, pos.start.column + 1, rule.CODE, rule.NAME, rep.record,
                                    render(rep, texts, assumed_note(rule, judged)), pos.end.line, pos.end.column + 1,
                                    _fix(rule, rep, texts, positions, starts)))
    if report_unused:
        findings += unused_suppressions(path, sup, used, "in this statement")
    result.findings = sorted(set(findings))
    return result


def _fix(rule: Rule, rep, texts: dict[str, RecordText], positions, starts):
    """The report's fix in offsets, when the rule implements its record's fix and that record's
    verification status is `confirmed`."""
    number = rule.FIXES.get(rep.record)
    text = texts.get(rep.record)
    if rep.fix is None or number is None or text is None or not text.confirmed:
        return None
    return resolve(rep.fix, number, positions, starts)


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
