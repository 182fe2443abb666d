"""`plait lsp` and this version's constructs, through a real LSP client (pytest-lsp) over stdio.

What a user types in a tool's `run = delegate(...)` / `hosted(...)`, a `budget`, and a `test` block (its
attributes, keyed blocks and `expect` subjects) is completed; hovering those words explains them; tests, types
and threads are in the outline; a test's stand-in `tools` name their tools (definition, references).
"""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

SPEC = """plait 0.3

model fast = "openai/gpt-4o-mini"

type Flight "A flight that can be booked." { kind: "flight", number: string }

thread talk "The conversation with the traveller."

input { city: string }

agent finder "Find flights." {
  model  = fast
  prompt = "Flights from {{input.origin}}"
  output { flights: list[Flight], note: string? }
}

tool find_flights "Find flights from a city." {
  params { origin: string }
  run = delegate(finder) { returns = output.flights }
}

tool web "Search the web." { run = hosted(web_search) { context_size = low } }

tool book "Book a flight." {
  params { number: string }
  run      = http(POST, "https://example.com/book/{{number}}")
  approval = required
}

ask confirm "Book {{input}}?" { answer { ok: bool } }

agent planner {
  model   = fast
  tools   = [find_flights, web, book]
  thread  = talk
  budget  = { usd = 2.00, model_calls = 4, on_exceeded = fail }
  output { choice: string, stops: int }
}

step draft {
  model    = fast
  messages = [system("You draft replies."), user("Hello"), assistant("Hi!"), user("Draft {{input}}")]
}

step review {
  model  = fast
  prompt = "Review {{input}}"
  output { verdict: "accept" | "revise" }
}

loop polish = draft -> review { until = verdict == "accept", max_iterations = 3 }

route settle on input.verdict { "accept" -> confirm, else -> confirm }

chain main = planner -> polish

chain wrap_up = polish -> settle

test books "A plan is booked" {
  entry   = wrap_up
  input   = "Paris"
  replies = { draft = [{ text = "AF1" }], review = [{ output = { verdict = "accept" } }] }
  tools   = { book = [{ result = "ok" }] }
  expect case(settle) == "accept"
  expect run.model_calls <= 4
}
"""


#: The server's answer to `initialize` (its capabilities).
INITIALIZED: dict[str, lsp.InitializeResult] = {}


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("workspace")


@pytest_lsp.fixture(
    scope="module", config=ClientServerConfig(server_command=[sys.executable, "-m", "plait", "lsp", "--stdio"])
)
async def client(lsp_client: LanguageClient, root: Path):
    folder = lsp.WorkspaceFolder(uri=root.as_uri(), name="workspace")
    result = await lsp_client.initialize_session(
        lsp.InitializeParams(capabilities=lsp.ClientCapabilities(), root_uri=root.as_uri(), workspace_folders=[folder])
    )
    INITIALIZED["result"] = result
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def spec(root: Path, request) -> Path:
    folder = root / re.sub(r"\W+", "_", request.node.name)
    folder.mkdir()
    path = folder / "trip.plait"
    path.write_text(SPEC)
    return path


def _at(text: str, needle: str, into: int = 0) -> lsp.Position:
    """The position `into` characters into the first `needle` (the texts here are ASCII)."""
    offset = text.index(needle) + into
    return lsp.Position(line=text.count("\n", 0, offset), character=offset - (text.rfind("\n", 0, offset) + 1))


def _open(client: LanguageClient, path: Path, text: str) -> str:
    uri = path.as_uri()
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="plait", version=1, text=text)
        )
    )
    return uri


async def _checked(client: LanguageClient, uri: str) -> None:
    """Wait (up to 30 s) for the document's first check: its names are known from then on."""
    for _ in range(300):
        if uri in client.diagnostics:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"no diagnostics for {uri}")


async def _completion(client: LanguageClient, path: Path, typed: str) -> list[lsp.CompletionItem]:
    uri = _open(client, path, SPEC)
    await _checked(client, uri)
    text = SPEC + typed
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )
    found = await client.text_document_completion_async(
        lsp.CompletionParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=_at(text, typed, len(typed)))
    )
    assert isinstance(found, list)
    return found


TEST_ATTRIBUTES = ["entry", "input", "replies", "answers", "decisions", "tools", "expect"]
RUNNABLES = ["finder", "confirm", "planner", "draft", "review", "polish", "settle", "main", "wrap_up"]
DECLARATION_WORDS = [
    *("model", "tool", "mcp", "agent", "step", "chain", "parallel", "consolidate", "route", "loop", "map", "ask"),
    *("input", "state", "import", "type", "thread", "test"),
]
SUBJECTS = ["output", "run", "case", "iterations", "exit", "items", "asked", "approvals", "called", "calls", "judge"]


@pytest.mark.parametrize(
    "typed, labels",
    [
        # A tool's run, and what each kind of run takes.
        ('tool t "T." {\n  run = ', ["python", "http", "delegate", "hosted"]),
        ("step s {\n  run = ", ["python"]),
        ('tool t "T." {\n  run = delegate(', ["finder", "planner"]),
        ('tool t "T." {\n  run = delegate(finder) { ', ["returns"]),
        ('tool t "T." {\n  run = delegate(finder) { returns = ', ["output"]),
        ('tool t "T." {\n  run = delegate(finder) { returns = output.', ["flights", "note"]),
        ('tool t "T." {\n  run = hosted(', ["web_search", "code_execution"]),
        (
            'tool t "T." {\n  run = hosted(web_search) { ',
            ["max_uses", "allowed_domains", "blocked_domains", "context_size"],
        ),
        ('tool t "T." {\n  run = hosted(web_search) { context_size = ', ["low", "medium", "high"]),
        # A budget's keys and choices, wherever a budget is written.
        ("agent a {\n  budget = { ", ["usd", "tokens", "model_calls", "on_exceeded", "unpriced"]),
        ("agent a {\n  budget = { usd = 1, ", ["tokens", "model_calls", "on_exceeded", "unpriced"]),
        ("chain c = draft -> review { budget = { on_exceeded = ", ["pause", "fail"]),
        ("route r on input.verdict {\n  budget = { unpriced = ", ["deny", "allow"]),
        # A test's attributes (those not written yet) and `expect`, after the other declarations.
        ("test t {\n  ", TEST_ATTRIBUTES),
        ('test t {\n  input = "x"\n  ', [a for a in TEST_ATTRIBUTES if a != "input"]),
        ("test t {\n  entry = ", RUNNABLES),
        ("test t {\n  replies = ", ["cassette", "live"]),
        ("test t {\n  replies = { ", ["fast", "finder", "planner", "draft", "review"]),
        ("test t {\n  answers = { ", ["confirm"]),
        ("test t {\n  decisions = { ", ["find_flights", "web", "book"]),
        ("test t {\n  decisions = { book = ", ['"approve"', '"approve_same"', '"reject"']),
        ("test t {\n  tools = { book = [], ", ["find_flights", "web"]),
        # What an `expect` line reads.
        ("test t {\n  expect ", [*SUBJECTS, *RUNNABLES]),
        ("test t {\n  expect not ", [*SUBJECTS, *RUNNABLES]),
        ("test t {\n  expect case(", ["settle"]),
        ("test t {\n  expect iterations(", ["polish"]),
        ("test t {\n  expect exit(", ["polish"]),
        ("test t {\n  expect asked(", ["confirm"]),
        ("test t {\n  expect approvals(", ["find_flights", "web", "book"]),
        ("test t {\n  expect called(", ["finder", "find_flights", "web", "book", "planner"]),
        ("test t {\n  expect judge(", ["fast"]),
        ('test t {\n  expect judge(fast, "Kind?") { ', ["repeat", "pass_rate", "of", "replies"]),
        (
            "test t {\n  expect run.",
            [
                "model_calls",
                "tokens",
                "input_tokens",
                "output_tokens",
                "steps",
                "tool_calls",
                "stop_reason",
                "error",
                "cost",
            ],
        ),
        ("test t {\n  entry = planner\n  expect output.", ["choice", "stops"]),
        ("test t {\n  expect output.", ["verdict"]),  # main's: its loop's, its body's last step's
        ("test t {\n  expect review.", ["verdict"]),
        ("test t {\n  entry = wrap_up\n  expect output.", ["ok"]),  # a route's: its cases' records
        ('step s {\n  prompt = "{{settle.', ["ok"]),
        ('step s {\n  prompt = "{{polish.', ["verdict"]),  # a loop's: its last iteration's
        ("test t {\n  expect output ", ["in", "matches", "contains", "in_order", "any_order"]),
        # What a test's entries hold: a reply's, a stand-in result's, a decision's keys, an answer's fields.
        ("test t {\n  replies = { draft = [{ ", ["text", "output", "tool_calls"]),
        ('test t {\n  replies = { draft = [{ text = "a" }, { ', ["text", "output", "tool_calls"]),
        ('test t {\n  replies = { draft = [{ text = "a" }], ', ["fast", "finder", "planner", "review"]),
        ("test t {\n  tools = { book = [{ ", ["result", "error"]),
        ("test t {\n  decisions = { book = { ", ["action", "arguments"]),
        ("test t {\n  answers = { confirm = { ", ["ok"]),
        ("test t {\n  expect called(book, { ", ["number"]),
        # Conditions read fields bare: a map's filter its item's, a loop's until its body's, an approval the params.
        ("map m = draft { over = finder.flights, filter = ", ["kind", "number"]),
        ("loop l = draft -> review { max_iterations = 2, until = ", ["verdict", *RUNNABLES]),
        ('tool book "Book a flight." {\n  approval = ', ["number", "required", "never"]),
        # A hosted tool's report, read in a template after an agent used it.
        ('step s {\n  prompt = "{{web.', ["queries", "citations"]),
        # Where a declaration may start: its keywords, this version's `type`, `thread` and `test` among them.
        ("", DECLARATION_WORDS),
        ("agent a { model = fast }\n", DECLARATION_WORDS),
        (
            "chain c = draft ->\n  ",
            ["finder", "confirm", "planner", "draft", "review", "polish", "settle", "main", "wrap_up"],
        ),
    ],
)
async def test_completion_in_the_new_constructs(client: LanguageClient, spec, typed, labels):
    assert [item.label for item in await _completion(client, spec, typed)] == labels


async def test_typing_an_opening_bracket_asks_for_completion(client: LanguageClient):
    # `delegate(`, `hosted(`, `case(`, `called(`: what goes inside is offered as the bracket is typed.
    options = INITIALIZED["result"].capabilities.completion_provider
    assert options is not None and "(" in (options.trigger_characters or [])


async def test_completion_items_carry_their_doc_lines(client: LanguageClient, spec):
    items = {i.label: i for i in await _completion(client, spec, "test t {\n  expect ")}
    assert items["case"].documentation.startswith("`case(ROUTE)`: the case the route took")
    items = {i.label: i for i in await _completion(client, spec, "agent a {\n  budget = { ")}
    assert items["model_calls"].documentation == "the most model calls it may make"
    assert items["model_calls"].kind == lsp.CompletionItemKind.Property


async def _hover(client: LanguageClient, path: Path, needle: str, into: int = 0) -> str:
    uri = _open(client, path, SPEC)
    found = await client.text_document_hover_async(
        lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=_at(SPEC, needle, into))
    )
    assert found is not None, needle
    return found.contents.value


@pytest.mark.parametrize(
    "needle, into, shown",
    [
        ("usd = 2.00", 0, "the most USD its model calls may cost"),
        ("model_calls = 4", 0, "the most model calls it may make"),
        ("on_exceeded = fail", 3, "`pause` (default: the run stops for a person"),
        ("delegate(finder)", 2, "an agent answers the tool"),
        ("returns = output", 0, "the part of the agent's output the calling model gets back"),
        ("hosted(web_search)", 0, "the model's provider runs the tool itself"),
        ("web_search)", 3, "a hosted tool its provider runs: `openai`, `anthropic`, `google`"),
        ("context_size = low", 0, "how much of the pages the model reads"),
        ("test books", 6, "A plan is booked"),
        ("replies = {", 0, "inline replies keyed by runnable"),
        ("tools   = { book", 0, "stand-in results per tool"),
        ("expect case", 0, "a condition on what the run made or did"),
        ("case(settle)", 1, "the case the route took"),
        ("run.model_calls", 6, "model calls made"),
        ('assistant("Hi!")', 0, "an answer of the model before the last `user` message"),
    ],
)
async def test_hover_explains_the_new_words(client: LanguageClient, spec, needle, into, shown):
    assert shown in await _hover(client, spec, needle, into)


async def test_hover_on_a_name_in_a_test_still_shows_its_declaration(client: LanguageClient, spec):
    shown = await _hover(client, spec, "case(settle)", 7)
    assert "route settle" in shown


async def test_the_outline_lists_types_threads_the_input_and_tests(client: LanguageClient, spec):
    uri = _open(client, spec, SPEC)
    found = await client.text_document_document_symbol_async(
        lsp.DocumentSymbolParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
    )
    symbols = [(s.name, s.detail, s.kind) for s in found]
    assert ("Flight", "type", lsp.SymbolKind.TypeParameter) in symbols
    assert ("talk", "thread", lsp.SymbolKind.Variable) in symbols
    assert ("input", "input", lsp.SymbolKind.Object) in symbols  # named by its keyword
    assert symbols[-1] == ("books", "test", lsp.SymbolKind.Boolean)
    [books] = [s for s in found if s.name == "books"]
    assert books.selection_range == lsp.Range(start=_at(SPEC, "test books", 5), end=_at(SPEC, "test books", 10))
    assert books.range.start == _at(SPEC, "test books")


async def test_a_tests_stand_in_tools_name_their_tools(client: LanguageClient, spec):
    uri = _open(client, spec, SPEC)
    at = _at(SPEC, "tools   = { book", 12)
    found = await client.text_document_definition_async(
        lsp.DefinitionParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=at)
    )
    assert found.range.start == _at(SPEC, "tool book", 5)
    uses = await client.text_document_references_async(
        lsp.ReferenceParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            position=at,
            context=lsp.ReferenceContext(include_declaration=False),
        )
    )
    assert sorted(u.range.start.line for u in uses) == [_at(SPEC, "web, book").line, at.line]
