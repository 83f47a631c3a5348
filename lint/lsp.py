"""`errkb lsp` (or `errkb lint --lsp`): the linter as a Language Server Protocol server on stdio.

Diagnostics are published when a document is opened, changed or saved: its in-memory text is
linted as standard input is (runner.lint_stdin), under the document's file name, so the
pyproject.toml above it, its excludes and per-file ignores apply. Code actions offer each
finding's autofix as a quick fix (unsafe ones marked, never preferred) and `source.fixAll.errkb`
applies every safe fix. Nothing is cached: the text changes with every keystroke.
"""

from __future__ import annotations

import bisect
import io
import tokenize
from pathlib import Path

from lsprotocol import types as t
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from errkb.lint import config as config_mod
from errkb.lint import fixes
from errkb.lint.results import UNUSED_SUPPRESSION, Finding, Fix
from errkb.lint.runner import lint_stdin
from errkb.lint.table import RecordTexts, rule_table

FIX_ALL = "source.fixAll.errkb"


class DocumentLinter:
    """Lints one document's text as the file it names; the rule table and the records'
    wording are loaded once, the configuration at every call (pyproject.toml may change)."""

    def __init__(self, data_dir: Path) -> None:
        self.rows = rule_table(None)
        self.texts = RecordTexts(data_dir, {r for row in self.rows.values() for r in row.records})

    def __call__(self, path: Path, source: bytes) -> tuple[list[Finding], str | None]:
        cfg = config_mod.load(path.parent if path.parent.is_dir() else None)
        codes = config_mod.selected({c: r.name for c, r in self.rows.items()}, cfg.select, cfg.ignore)
        run = lint_stdin(source, path, cfg, codes, self.texts, use_cache=False, rows=self.rows)
        result = run.results[0] if run.results else None
        if result is None:
            return [], None
        findings = result.findings
        if not cfg.report_unused:
            findings = [f for f in findings if f.rule != UNUSED_SUPPRESSION]
        return findings, result.skipped


def _document_path(uri: str) -> Path:
    path = to_fs_path(uri)
    return Path(path) if path else Path.cwd() / "untitled.py"


def _encode(text: str) -> bytes:
    """The document's text as the bytes of its file: in its declared coding, else UTF-8."""
    data = text.encode("utf-8")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return text.encode(encoding) if encoding not in ("utf-8", "utf-8-sig") else data
    except (SyntaxError, LookupError, UnicodeEncodeError):
        return data


class Positions:
    """Character offsets and (1-based line, 1-based column) pairs of the linted text as LSP
    positions, counted in the code units the client and server agreed on."""

    def __init__(self, text: str, codec) -> None:
        self.text, self.codec = text, codec
        self.starts = fixes.line_starts(text)

    def at_offset(self, offset: int) -> t.Position:
        line = bisect.bisect_right(self.starts, offset) - 1
        return t.Position(line, self.codec.client_num_units(self.text[self.starts[line]:offset]))

    def at(self, line: int, col: int) -> t.Position:
        if line < 1 or line > len(self.starts):
            return t.Position(max(line - 1, 0), 0)
        return self.at_offset(min(self.starts[line - 1] + col - 1, len(self.text)))

    def range_of(self, f: Finding) -> t.Range:
        start = self.at(f.line, f.col)
        end = self.at(f.end_line, f.end_col) if f.end_line else start
        return t.Range(start, end)

    def edits(self, fix: Fix) -> list[t.TextEdit]:
        return [t.TextEdit(t.Range(self.at_offset(a), self.at_offset(b)), text) for a, b, text in fix.edits]

    def whole(self) -> t.Range:
        return t.Range(t.Position(0, 0), self.at_offset(len(self.text)))


def diagnostic(f: Finding, pos: Positions) -> t.Diagnostic:
    warn = f.rule == UNUSED_SUPPRESSION
    return t.Diagnostic(range=pos.range_of(f), message=f.message, code=f.rule, source="errkb",
                        severity=t.DiagnosticSeverity.Warning if warn else t.DiagnosticSeverity.Error,
                        data={"record": f.record_id} if f.record_id else None)


def _overlaps(a: t.Range, b: t.Range) -> bool:
    return (a.start.line, a.start.character) <= (b.end.line, b.end.character) and \
        (b.start.line, b.start.character) <= (a.end.line, a.end.character)


def _wanted(kind: str, only) -> bool:
    return not only or any(kind == k or kind.startswith(f"{k}.") for k in only)


def build_server(data_dir: Path) -> LanguageServer:
    from importlib import metadata

    try:
        version = metadata.version("errkb")
    except metadata.PackageNotFoundError:
        version = "0"
    server = LanguageServer("errkb", version)
    lint = DocumentLinter(data_dir)

    def findings_of(ls: LanguageServer, uri: str):
        doc = ls.workspace.get_text_document(uri)
        path = _document_path(uri)
        source = _encode(doc.source)
        try:
            found, skipped = lint(path, source)
        except config_mod.ConfigError as exc:
            ls.window_show_message(t.ShowMessageParams(t.MessageType.Error, f"errkb: {exc}"))
            return doc, path, source, [], None
        except Exception as exc:  # a linter bug must not take the editor's server down
            ls.window_log_message(t.LogMessageParams(t.MessageType.Error,
                                                     f"errkb: internal error: {type(exc).__name__}: {exc}"))
            return doc, path, source, [], None
        if skipped:
            ls.window_log_message(t.LogMessageParams(t.MessageType.Info, f"errkb: skipped {path}: {skipped}"))
        return doc, path, source, found, Positions(doc.source, doc.position_codec)

    def publish(ls: LanguageServer, uri: str) -> None:
        doc, _, _, found, pos = findings_of(ls, uri)
        diagnostics = [diagnostic(f, pos) for f in found] if pos else []
        ls.text_document_publish_diagnostics(t.PublishDiagnosticsParams(uri, diagnostics, doc.version))

    @server.feature(t.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: LanguageServer, params: t.DidOpenTextDocumentParams) -> None:
        publish(ls, params.text_document.uri)

    @server.feature(t.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: LanguageServer, params: t.DidChangeTextDocumentParams) -> None:
        publish(ls, params.text_document.uri)

    @server.feature(t.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: LanguageServer, params: t.DidSaveTextDocumentParams) -> None:
        publish(ls, params.text_document.uri)

    @server.feature(t.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: LanguageServer, params: t.DidCloseTextDocumentParams) -> None:
        ls.text_document_publish_diagnostics(t.PublishDiagnosticsParams(params.text_document.uri, []))

    @server.feature(t.TEXT_DOCUMENT_CODE_ACTION,
                    t.CodeActionOptions(code_action_kinds=[t.CodeActionKind.QuickFix, FIX_ALL]))
    def code_action(ls: LanguageServer, params: t.CodeActionParams) -> list[t.CodeAction]:
        uri, only = params.text_document.uri, params.context.only
        doc, path, source, found, pos = findings_of(ls, uri)
        if pos is None:
            return []
        actions = []
        if _wanted(t.CodeActionKind.QuickFix, only):
            for f in found:
                if f.fix is None or not _overlaps(pos.range_of(f), params.range):
                    continue
                title = f"errkb {f.rule}: {f.fix.title}" + ("" if f.fix.safe else " (unsafe)")
                actions.append(t.CodeAction(
                    title, kind=t.CodeActionKind.QuickFix, diagnostics=[diagnostic(f, pos)],
                    is_preferred=f.fix.safe, edit=t.WorkspaceEdit(changes={uri: pos.edits(f.fix)})))
        if _wanted(FIX_ALL, only) and any(f.fix is not None and f.fix.safe for f in found):
            done = fixes.fix_source(str(path), source, lambda src: lint(path, src), unsafe=False)
            if done.after != source:
                new_text = fixes.decode_source(done.after)[0]
                actions.append(t.CodeAction(
                    "errkb: apply every safe fix", kind=FIX_ALL,
                    edit=t.WorkspaceEdit(changes={uri: [t.TextEdit(pos.whole(), new_text)]})))
        return actions

    return server


def serve(data_dir: Path) -> int:
    build_server(data_dir).start_io()
    return 0
