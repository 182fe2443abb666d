"""`plait lsp` end to end: a real LSP client (pytest-lsp) talks to the server over stdio.

Diagnostics on open and change (across an import, as `plait check` reports them), hover, go-to-definition
across files, document symbols and formatting.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

pytestmark = [pytest.mark.slow, pytest.mark.asyncio]

MODELS = 'model fast = "openai/gpt-4o-mini"\n'
MAIN = 'import "models.plait"\nagent main "Writes things." {\n  model = fsat\n}\n'


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "plait", "lsp", "--stdio"]))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(lsp.InitializeParams(capabilities=lsp.ClientCapabilities()))
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def files(tmp_path) -> tuple[Path, Path]:
    (tmp_path / "models.plait").write_text(MODELS)
    main = tmp_path / "main.plait"
    main.write_text(MAIN)
    return main, tmp_path / "models.plait"


def _open(client: LanguageClient, path: Path, text: str) -> str:
    uri = path.as_uri()
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="plait", version=1, text=text)
        )
    )
    return uri


async def _diagnostics(client: LanguageClient, uri: str, want: int | None = None) -> list[lsp.Diagnostic]:
    """The last diagnostics published for `uri` (waiting, up to 30 s, until there are `want` of them)."""
    for _ in range(300):
        if uri in client.diagnostics and (want is None or len(client.diagnostics[uri]) == want):
            return client.diagnostics[uri]
        await asyncio.sleep(0.1)
    raise AssertionError(f"no diagnostics ({want}) for {uri}: {client.diagnostics.get(uri)}")


async def test_diagnostics_on_open_match_check_and_cover_imports(client: LanguageClient, files):
    main, models = files
    uri = _open(client, main, MAIN)
    [found] = await _diagnostics(client, uri, 1)
    assert (found.code, found.severity, found.source) == ("P101", lsp.DiagnosticSeverity.Error, "plait")
    assert found.message.startswith("undefined name `fsat`") and "help: did you mean `fast`?" in found.message
    assert found.range == lsp.Range(start=lsp.Position(line=2, character=10), end=lsp.Position(line=2, character=14))
    # The imported file's own problem (its model is unused, since main names `fsat`) is published for it.
    [unused] = await _diagnostics(client, models.as_uri(), 1)
    assert unused.code == "P601"


async def test_a_change_is_checked_again_and_fixed_problems_clear(client: LanguageClient, files):
    main, models = files
    uri = _open(client, main, MAIN)
    await _diagnostics(client, uri, 1)
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=MAIN.replace("fsat", "fast"))],
        )
    )
    assert list(await _diagnostics(client, uri, 0)) == []
    assert list(await _diagnostics(client, models.as_uri(), 0)) == []


async def test_hover_shows_the_declaration_and_a_diagnostics_explanation(client: LanguageClient, files):
    main, _ = files
    text = MAIN.replace("fsat", "fast")
    uri = _open(client, main, text)
    result = await client.text_document_hover_async(
        lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line=2, character=12))
    )
    assert "model fast" in result.contents.value and '"openai/gpt-4o-mini"' in result.contents.value
    result = await client.text_document_hover_async(
        lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line=1, character=7))
    )
    assert "agent main" in result.contents.value and "Writes things." in result.contents.value

    uri = _open(client, main.with_name("typo.plait"), MAIN)
    result = await client.text_document_hover_async(
        lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line=2, character=11))
    )
    assert "error[P101] undefined-name" in result.contents.value
    assert "A reference to a name that no declaration" in result.contents.value  # `plait explain P101`


async def test_definition_jumps_into_the_imported_file(client: LanguageClient, files):
    main, models = files
    uri = _open(client, main, MAIN.replace("fsat", "fast"))
    result = await client.text_document_definition_async(
        lsp.DefinitionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line=2, character=11)
        )
    )
    assert result.uri == models.as_uri()
    assert result.range == lsp.Range(start=lsp.Position(line=0, character=6), end=lsp.Position(line=0, character=10))
    nothing = await client.text_document_definition_async(
        lsp.DefinitionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line=0, character=2)
        )
    )
    assert nothing is None


async def test_document_symbols_list_the_declarations(client: LanguageClient, files):
    main, _ = files
    uri = _open(client, main, MAIN + 'model spare = "openai/gpt-4o"\n')
    result = await client.text_document_document_symbol_async(
        lsp.DocumentSymbolParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
    )
    assert [(s.name, s.detail, s.kind) for s in result] == [
        ("main", "agent", lsp.SymbolKind.Class),
        ("spare", "model", lsp.SymbolKind.Constant),
    ]
    assert result[0].range.start == lsp.Position(line=1, character=0)
    assert result[0].selection_range.start == lsp.Position(line=1, character=6)


async def test_formatting_is_plait_fmt_and_a_broken_file_gets_no_edit(client: LanguageClient, files):
    main, _ = files
    uri = _open(client, main, 'model fast = "openai/gpt-4o-mini"\nagent main {model=fast}\n')
    options = lsp.FormattingOptions(tab_size=2, insert_spaces=True)
    [edit] = await client.text_document_formatting_async(
        lsp.DocumentFormattingParams(text_document=lsp.TextDocumentIdentifier(uri=uri), options=options)
    )
    assert edit.new_text == 'model fast = "openai/gpt-4o-mini"\n\nagent main { model = fast }\n'
    assert edit.range.start == lsp.Position(line=0, character=0)
    uri = _open(client, main.with_name("broken.plait"), "agent main {\n")
    assert (
        await client.text_document_formatting_async(
            lsp.DocumentFormattingParams(text_document=lsp.TextDocumentIdentifier(uri=uri), options=options)
        )
        is None
    )
