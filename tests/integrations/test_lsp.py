"""`plait lsp` end to end: a real LSP client (pytest-lsp) talks to the server over stdio.

Diagnostics on open and change (across an import, as `plait check` reports them, against an imported
file's unsaved buffer), hover, go-to-definition and references across files, completion, rename across
files, document symbols and formatting. One server serves the whole module (each test has its own folder
under the server's workspace folder).
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

MODELS = 'model fast = "openai/gpt-4o-mini"\n'
MAIN = 'import "models.plait"\nagent main "Writes things." {\n  model = fsat\n}\n'


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    """The editor's workspace folder."""
    return tmp_path_factory.mktemp("workspace")


@pytest_lsp.fixture(
    scope="module", config=ClientServerConfig(server_command=[sys.executable, "-m", "plait", "lsp", "--stdio"])
)
async def client(lsp_client: LanguageClient, root: Path):
    folder = lsp.WorkspaceFolder(uri=root.as_uri(), name="workspace")
    await lsp_client.initialize_session(
        lsp.InitializeParams(capabilities=lsp.ClientCapabilities(), root_uri=root.as_uri(), workspace_folders=[folder])
    )
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def files(root: Path, request) -> tuple[Path, Path]:
    folder = root / re.sub(r"\W+", "_", request.node.name)
    folder.mkdir()
    (folder / "models.plait").write_text(MODELS)
    main = folder / "main.plait"
    main.write_text(MAIN)
    return main, folder / "models.plait"


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


# --- references, completion, rename, unsaved buffers ------------------------------------------------------

SPEC = """plait 0.2
import "models.plait"

input { topic: string }

tool lookup "Look up a topic." {
  params { topic: string }
  run = http(GET, "https://kb.example.com/?q={{topic}}")
}

step review {
  model  = fast
  prompt = "Review: {{input.topic}}"
  output { verdict: "ok" | "redo" }
}

agent writer "Writes things." {
  model  = fast
  tools  = [lookup]
  system = "The review said {{review.verdict}}."
}

chain main = review -> writer
"""


def _at(text: str, needle: str, into: int = 0) -> lsp.Position:
    """The position `into` characters into the first `needle` (the texts here are ASCII)."""
    offset = text.index(needle) + into
    return lsp.Position(line=text.count("\n", 0, offset), character=offset - (text.rfind("\n", 0, offset) + 1))


def _change(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


@pytest.fixture
def spec(files) -> tuple[Path, Path]:
    main, models = files
    main.write_text(SPEC)
    return main, models


async def test_references_span_the_importer_and_the_imported_file(client: LanguageClient, spec):
    main, models = spec
    # A third spec in the workspace folder imports models.plait too; it is not open, and still found.
    (main.parent / "other.plait").write_text('import "models.plait"\nagent solo { model = fast }\n')
    uri = _open(client, main, SPEC)
    found = await client.text_document_references_async(
        lsp.ReferenceParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            position=_at(SPEC, "model  = fast", 10),
            context=lsp.ReferenceContext(include_declaration=True),
        )
    )
    places = sorted(
        (Path(loc.uri.removeprefix("file://")).name, loc.range.start.line, loc.range.start.character) for loc in found
    )
    assert places == [("main.plait", 11, 11), ("main.plait", 17, 11), ("models.plait", 0, 6), ("other.plait", 1, 21)]


@pytest.mark.parametrize(
    "typed, labels",
    [
        ("agent x {\n  model = ", ["fast"]),
        ("agent x {\n  tools = [", ["lookup", "writer"]),
        ("agent x {\n  until = ", ["lookup"]),
        ("agent x {\n  approval = [", ["lookup"]),
        ("chain c = review -> ", ["review", "writer", "main"]),
        # `break` too: a route may be placed in a loop anywhere, so a case may leave it
        ('route r on review.verdict {\n  "ok" -> ', ["review", "writer", "main", "break"]),
        ('step s {\n  prompt = "{{review.', ["verdict"]),
        ('step s {\n  prompt = "{{input.', ["topic"]),
    ],
)
async def test_completion_offers_names_of_the_kind_each_position_takes(client: LanguageClient, spec, typed, labels):
    main, _ = spec
    uri = _open(client, main, SPEC)
    await _diagnostics(client, uri)  # checked once as it parses: its names are known from now on
    text = SPEC + typed
    _change(client, uri, text, 2)
    items = await client.text_document_completion_async(
        lsp.CompletionParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=_at(text, typed, len(typed)))
    )
    assert [item.label for item in items] == labels


async def test_completion_of_attribute_keys_follows_the_schema(client: LanguageClient, spec):
    from plait.compiler.schema import SCHEMAS

    main, _ = spec
    uri = _open(client, main, SPEC)
    await _diagnostics(client, uri)
    text = SPEC + 'tool t {\n  run = python("kb:t")\n  '
    _change(client, uri, text, 2)
    items = await client.text_document_completion_async(
        lsp.CompletionParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=_at(text, "python", 18))
    )
    assert [i.label for i in items] == [k for k in SCHEMAS["tool"] if k != "run"] + ["params"]
    assert items[0].kind == lsp.CompletionItemKind.Property
    # approval's doc line (a condition may stand for `required` since conditional approval)
    assert items[0].documentation == (
        "`required`: every call waits for a person's decision; `amount > 100`: only a call it holds for."
    )


async def test_rename_across_files_gives_an_edit_that_compiles(client: LanguageClient, spec):
    from plait.compiler.pipeline import compile_spec

    main, models = spec
    uri = _open(client, main, SPEC)
    at = _at(SPEC, "model  = fast", 10)
    prepared = await client.text_document_prepare_rename_async(
        lsp.PrepareRenameParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=at)
    )
    assert prepared.placeholder == "fast" and prepared.range.start == lsp.Position(line=11, character=11)
    edit = await client.text_document_rename_async(
        lsp.RenameParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=at, new_name="quick")
    )
    assert set(edit.changes) == {uri, models.as_uri()}
    for target, edits in edit.changes.items():
        path = Path(target.removeprefix("file://"))
        lines = path.read_text().split("\n")
        for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
            assert e.range.start.line == e.range.end.line
            line = lines[e.range.start.line]
            lines[e.range.start.line] = line[: e.range.start.character] + e.new_text + line[e.range.end.character :]
        path.write_text("\n".join(lines))
    assert "quick" in models.read_text() and "fast" not in main.read_text()
    result = compile_spec(main)
    assert result.ok, [str(d) for d in result.errors]


@pytest.mark.parametrize(
    "needle, into, message",
    [("agent writer", 1, "`agent` is a keyword"), ("{{input", 3, "`input` is a keyword"), ("http(", 1, "built into")],
)
async def test_rename_of_a_keyword_or_builtin_is_refused_with_a_reason(
    client: LanguageClient, spec, needle, into, message
):
    main, _ = spec
    uri = _open(client, main, SPEC)
    with pytest.raises(JsonRpcException) as refused:
        await client.text_document_prepare_rename_async(
            lsp.PrepareRenameParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=_at(SPEC, needle, into))
        )
    assert message in refused.value.message


async def test_an_unsaved_imported_buffer_is_what_its_importer_sees(client: LanguageClient, spec):
    main, models = spec
    uri = _open(client, main, SPEC)
    assert list(await _diagnostics(client, uri, 0)) == []
    models_uri = _open(client, models, MODELS)
    _change(client, models_uri, MODELS.replace("fast", "quick"), 2)  # not saved: the disk still says `fast`
    found = await _diagnostics(client, uri, 2)
    assert [d.code for d in found] == ["P101", "P101"] and models.read_text() == MODELS
    _change(client, models_uri, MODELS, 3)
    assert list(await _diagnostics(client, uri, 0)) == []


async def test_diagnostics_have_plait_checks_codes_and_ranges(client: LanguageClient, spec, capsys):
    from plait.cli import main as plait

    main, _ = spec
    text = SPEC.replace("tools  = [lookup]", "tools  = [lokup]").replace("{{review.verdict}}", "{{review.verdic}}")
    main.write_text(text)
    assert plait(["check", "--format", "json", str(main)]) == 1
    reported = json.loads(capsys.readouterr().out)["diagnostics"]
    expected = [
        (d["code"], (d["line"] - 1, d["column"] - 1, d["end_line"] - 1, d["end_column"] - 1))
        for d in reported
        if d["file"] == str(main)
    ]
    assert len(expected) >= 2
    uri = _open(client, main, text)
    found = await _diagnostics(client, uri, len(expected))
    r = lambda d: (d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character)  # noqa: E731
    assert [(d.code, r(d)) for d in found] == expected


async def test_an_open_imported_file_shows_its_own_check_not_an_importers_view(client: LanguageClient, files):
    main, models = files
    text = MAIN.replace("fsat", "fast")
    uri = _open(client, main, text)
    # From main's check, models.plait is fine: main uses `fast`.
    assert list(await _diagnostics(client, models.as_uri(), 0)) == []
    models_uri = _open(client, models, MODELS)
    [own] = await _diagnostics(client, models_uri, 1)  # as `plait check models.plait` says: `fast` is never used
    assert own.code == "P601"
    _change(client, uri, text + "agent other { model = nope }\n", 2)
    for _ in range(300):
        if any(d.code == "P101" for d in client.diagnostics.get(uri, [])):
            break
        await asyncio.sleep(0.1)
    # main was checked again; its view of models.plait did not replace the file's own problems.
    assert [d.code for d in client.diagnostics[models_uri]] == ["P601"]


def _frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def test_a_malformed_message_is_one_line_on_stderr_and_the_server_keeps_serving():
    import subprocess

    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
    exit_ = {"jsonrpc": "2.0", "method": "exit"}
    stdin = _frame(b"hello") + _frame(json.dumps(initialize).encode()) + _frame(json.dumps(exit_).encode())
    done = subprocess.run(
        [sys.executable, "-m", "plait", "lsp"], input=stdin, capture_output=True, timeout=60, check=False
    )
    err = done.stderr.decode()
    assert "Traceback" not in err and err.count("\n") == 1 and "JSONDecodeError" in err, err
    assert b'"id": 1' in done.stdout and b'"capabilities"' in done.stdout  # initialize was still answered
