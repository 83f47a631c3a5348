"""The editor server (issue 18 item 6), driven by pygls's own LSP client over the pipes of a
real `errkb lsp` process: diagnostics on open, a quick fix, diagnostics gone after the fixed
text is sent, shutdown and exit. Only protocol events are awaited; the one timeout only turns a
hang into a failure."""

from __future__ import annotations

import asyncio
import sys

from lsprotocol import types as t
from pygls.lsp.client import BaseLanguageClient

SOURCE = ("from flash_attn.cute import flash_attn_varlen_func\n"
          "s = 'é🚀'; out = flash_attn_varlen_func(q, k, v, num_splits=4)\n")
FIXED = SOURCE.replace("num_splits=4", "num_splits=1")


async def _session(root) -> None:
    (root / "pyproject.toml").write_text('[tool.errkb]\ngpu-archs = ["sm90"]\n')
    uri = (root / "kernel.py").as_uri()
    client = BaseLanguageClient("errkb-test", "1")
    published: asyncio.Queue = asyncio.Queue()

    @client.feature(t.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(params: t.PublishDiagnosticsParams) -> None:
        published.put_nowait(params)

    await client.start_io(sys.executable, "-m", "errkb.cli", "lsp", cwd=str(root))
    try:
        result = await client.initialize_async(t.InitializeParams(
            capabilities=t.ClientCapabilities(), root_uri=root.as_uri()))
        assert "quickfix" in result.capabilities.code_action_provider.code_action_kinds
        client.initialized(t.InitializedParams())

        client.text_document_did_open(t.DidOpenTextDocumentParams(
            t.TextDocumentItem(uri=uri, language_id="python", version=1, text=SOURCE)))
        got = await published.get()
        assert got.uri == uri and got.version == 1
        [diag] = got.diagnostics
        assert diag.code == "EKB201" and diag.source == "errkb"
        assert "SplitKV not supported on SM 9.0" in diag.message
        # line 2 (0-based 1); columns in UTF-16 units: the emoji counts 2
        start = len("s = 'é🚀'; out = flash_attn_varlen_func(q, k, v, ".encode("utf-16-le")) // 2
        assert diag.range == t.Range(t.Position(1, start), t.Position(1, start + len("num_splits=4")))

        actions = await client.text_document_code_action_async(t.CodeActionParams(
            text_document=t.TextDocumentIdentifier(uri), range=diag.range,
            context=t.CodeActionContext(diagnostics=[diag])))
        [quick] = [a for a in actions if a.kind == t.CodeActionKind.QuickFix]
        assert quick.title == "errkb EKB201: Pass num_splits=1" and quick.is_preferred
        [edit] = quick.edit.changes[uri]
        assert edit.new_text == "1"
        assert edit.range == t.Range(t.Position(1, start + len("num_splits=")), t.Position(1, start + len("num_splits=4")))
        [fix_all] = [a for a in actions if a.kind == "source.fixAll.errkb"]
        assert fix_all.edit.changes[uri][0].new_text == FIXED

        client.text_document_did_change(t.DidChangeTextDocumentParams(
            t.VersionedTextDocumentIdentifier(uri=uri, version=2),
            [t.TextDocumentContentChangePartial(range=edit.range, text=edit.new_text)]))
        got = await published.get()
        assert got.version == 2 and len(got.diagnostics) == 0, got

        client.text_document_did_close(t.DidCloseTextDocumentParams(t.TextDocumentIdentifier(uri)))
        assert len((await published.get()).diagnostics) == 0
        await client.shutdown_async(None)
        client.exit(None)
        assert await client._server.wait() == 0
    finally:
        if client._server is not None and client._server.returncode is None:
            client._server.kill()  # only after a failure: do not wait for a server left running
        await client.stop()


def test_lsp_session(tmp_path):
    asyncio.run(asyncio.wait_for(_session(tmp_path), timeout=240))
