"""A test's `tools = { TOOL = [...] }`: checked against the spec at check time, and served at run time in place of
the tool, which never runs (no python import or call, no HTTP request, no MCP server started); approval still
asks, and a test that calls a tool more often than it gives results for fails naming it."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from plait.compiler.pipeline import compile_spec
from plait.spectest.runner import Outcome, Session, load_tests

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

SPEC = """plait 0.2

model fast = "openai/gpt-4o-mini"

tool record "Write down a fact." {
  params { fact: string }
  run = python("marker_tools:record")
}
tool fetch "Fetch a page." {
  params { url: string }
  run           = http(GET, "http://127.0.0.1:9/{{url}}")
  allow_private = true
}
tool publish "Publish the answer." {
  params { text: string }
  run      = python("marker_tools:record")
  approval = required
}
tool unused "Never used." {
  params { x: string }
  run = python("marker_tools:record")
}

agent writer {
  model = fast
  tools = [record, fetch, publish]
  until = publish succeeded
}
agent other { model = fast, tools = [unused] }

chain main = writer
chain nightly = other
"""

#: A python tool that leaves a file behind when it is imported and when it is called.
TOOLS_MODULE = """from pathlib import Path

Path(__file__).with_name("imported").write_text("yes")


def record(fact=None, text=None):
    Path(__file__).with_name("called").write_text("yes")
    return "recorded"
"""

REPLIES = """replies = {
    writer = [
      { tool_calls = [{ name = "fetch", arguments = { url = "page" } }] },
      { tool_calls = [{ name = "record", arguments = { fact = "cats purr" } }] },
      { tool_calls = [{ name = "publish", arguments = { text = "Cats purr." } }] },
    ]
  }"""


def _errors(test: str) -> list[tuple[str, int, str]]:
    """The test's errors (P7xx): the spec's own (its python module is not beside a spec given as text) are not."""
    result = compile_spec(SPEC + "\n" + test, path="spec.plait")
    first = SPEC.count("\n") + 2
    return [(d.code, d.span.line - first + 1, d.message) for d in result.diagnostics if d.code.startswith("P7")]


@pytest.mark.parametrize(
    ("tools", "code", "message"),
    [
        ("{ recrod = [] }", "P702", "`tools` names `recrod`, which is not a tool of the spec; did you mean `record`?"),
        ("{ unused = [] }", "P703", "`tools` names tool `unused`, which `main` never reaches"),
        ("{ writer = [] }", "P706", "`tools` names agent `writer`: a test stands in for tools"),
        ('{ record = "recorded" }', "P706", "the results for `record` must be a list like"),
        ("{ record = [{ value = 1 }] }", "P706", "one `result = VALUE` or one `error = TEXT` each"),
        ("{ record = [{ error = 3 }] }", "P706", "one `result = VALUE` or one `error = TEXT` each"),
        ('{ record = [{ result = "a", error = "b" }] }', "P706", "one `result = VALUE` or one `error = TEXT`"),
        ('{ "nope.read" = [] }', "P702", "`tools` names `nope.read`, but `nope` is not an MCP server of the spec"),
        ("3", "P701", "`tools` must be a map of results by tool"),
    ],
)
def test_a_stand_in_that_cannot_be_is_a_diagnostic_at_its_place(tools, code, message):
    errors = _errors(f"test t {{\n  tools = {tools}\n}}")
    assert len(errors) == 1, errors
    assert errors[0][0] == code and errors[0][1] == 2 and message in errors[0][2], errors


def test_good_stand_ins_compile_into_the_tests_record(tmp_path):
    folder = _project(
        tmp_path, 'test t {\n  tools = { record = ["ok", { result = { id = 1 } }], fetch = [{ error = "down" }] }\n}'
    )
    result = compile_spec(folder / "spec.plait")
    assert not [d for d in result.diagnostics if d.is_error]
    (test,) = result.tests
    assert test.tools == {"record": [{"result": "ok"}, {"result": {"id": 1}}], "fetch": [{"error": "down"}]}


def _files_spec(tmp_path: Path, test: str) -> list[Any]:
    folder = tmp_path / "files"
    if not folder.exists():
        shutil.copytree(EXAMPLES / "files", folder)
    (folder / "files.test.plait").write_text('import "files.plait"\n\n' + test, encoding="utf-8")
    result = compile_spec(folder / "files.test.plait")
    return [(d.code, d.message) for d in result.diagnostics if d.is_error]


def test_an_mcp_tools_result_is_checked_against_its_locked_output_schema(tmp_path):
    errors = _files_spec(tmp_path, 'test t {\n  tools = { "files.write_file" = [{ result = { content = 3 } }] }\n}\n')
    assert errors == [
        (
            "P706",
            "this result does not fit the output `files.write_file` declares: at `content`: 3 is not of type 'string'",
        )
    ]
    errors = _files_spec(tmp_path, 'test t {\n  tools = { "files.delete_all" = [] }\n}\n')
    assert errors and errors[0][0] == "P702" and "offers no tool `delete_all`" in errors[0][1]
    # A text result is what the model reads, as a server's text content is; a record that fits is accepted.
    assert (
        _files_spec(tmp_path, 'test t {\n  tools = { write_file = ["ok", { result = { content = "ok" } }] }\n}\n') == []
    )


def _run(folder: Path, name: str) -> list[Outcome]:
    (spec,) = load_tests([folder / name])
    assert not [d for d in spec.diagnostics if d.is_error], spec.diagnostics
    session = Session()
    try:
        return asyncio.run(session.run([spec]))
    finally:
        session.close()


def _project(tmp_path: Path, test: str) -> Path:
    (tmp_path / "marker_tools.py").write_text(TOOLS_MODULE, encoding="utf-8")
    (tmp_path / "spec.plait").write_text(SPEC + "\n" + test, encoding="utf-8")
    return tmp_path


def test_a_stood_in_tool_is_never_imported_or_called_and_approval_still_asks(tmp_path):
    folder = _project(
        tmp_path,
        f"""test t {{
  {REPLIES}
  decisions = {{ publish = "approve" }}
  tools     = {{
    fetch   = [{{ result = {{ title = "Cats", body = "They purr." }} }}]
    record  = [{{ error = "the notebook is full" }}]
    publish = [{{ result = "published at /cats" }}]
  }}
  expect run.tool_calls == [fetch, record, publish]
  expect approvals(publish) == 1
  expect run.stop_reason == "until"
  expect output == "published at /cats"
}}
""",
    )
    (outcome,) = _run(folder, "spec.plait")
    assert outcome.status == "passed", (outcome.message, [f.message for f in outcome.failures])
    assert not (folder / "imported").exists() and not (folder / "called").exists()
    # The model read each stand-in as the tool's result: a record as JSON, an error as an error.
    steps = outcome.result.report.tool_calls
    assert [(c["name"], c["is_error"]) for c in steps] == [("fetch", False), ("record", True), ("publish", False)]


def test_without_a_stand_in_the_tool_runs(tmp_path):
    folder = _project(
        tmp_path,
        f"""test t {{
  {REPLIES}
  decisions = {{ publish = "approve" }}
  tools     = {{ fetch = [{{ result = "a page" }}] }}
  expect output == "recorded"
}}
""",
    )
    (outcome,) = _run(folder, "spec.plait")
    assert outcome.status == "passed", (outcome.message, [f.message for f in outcome.failures])
    assert (folder / "called").exists()


def test_a_tool_called_more_often_than_the_test_gives_results_for_fails_it_naming_the_tool(tmp_path):
    folder = _project(
        tmp_path,
        f"""test t {{
  {REPLIES}
  decisions = {{ publish = "approve" }}
  tools     = {{ fetch = [], record = ["ok"], publish = ["done"] }}
  expect run.stop_reason == "until"
}}
""",
    )
    (outcome,) = _run(folder, "spec.plait")
    assert outcome.status == "failed"
    assert [f.message for f in outcome.failures] == [
        "`fetch` was called more often than the 0 result(s) the test gives for it"
    ]
    assert not (folder / "imported").exists()


def test_an_mcp_servers_stood_in_tools_start_no_server(tmp_path, monkeypatch):
    from plait.runtime.mcp import McpPool

    started: list[str] = []

    async def start(self: Any, server: str) -> Any:
        started.append(server)
        raise AssertionError("a stood-in MCP tool started its server")

    monkeypatch.setattr(McpPool, "start", start)
    folder = tmp_path / "files"
    shutil.copytree(EXAMPLES / "files", folder)
    outcomes = _run(folder, "files.test.plait")
    assert [o.status for o in outcomes] == ["passed"] * len(outcomes) and len(outcomes) == 3
    assert started == []
    assert not (folder / "data" / "summary.md").exists()
