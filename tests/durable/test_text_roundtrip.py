"""Any text a tool, a model or argv can produce is journaled and read back exactly: lone surrogates (a non-UTF-8 file
name a tool listed, a model's "\\ud800", a non-UTF-8 byte argv decoded) included, and one such row never touches another."""

from __future__ import annotations

import json
import os

import pytest

from durable_helpers import call, engine, go, tool
from plait.cli import main

#: What Python makes of the byte 0xff in a file name or an argument (surrogateescape): a lone surrogate.
BAD_BYTE = os.fsdecode(b"\xff")

SPEC = """
model demo = "scripted/demo" { script = "demo.json" }

tool listing "List the folder." {
  run = python("text_tools:listing")
}

agent main {
  model = demo
  tools = [listing]
}
"""

TOOLS = """
import os
from pathlib import Path

def listing():
    return sorted(os.listdir(Path(__file__).with_name("files")))
"""


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "JournalWriteError" not in err
    return code, out, err


@pytest.fixture
def project(backend, monkeypatch):
    root = backend.project
    if backend.url:
        monkeypatch.setenv("PLAIT_STORE", backend.url)
    (root / "spec.plait").write_text(SPEC)
    (root / "text_tools.py").write_text(TOOLS)
    files = root / "files"
    files.mkdir()
    (files / os.fsdecode(b"caf\xe9.txt")).write_text("x")
    (files / "plain.txt").write_text("y")
    monkeypatch.chdir(root)
    return backend


def runs(capsys):
    code, out, _ = cli(capsys, "runs", "--json")
    assert code == 0
    return [json.loads(line) for line in out.splitlines()]


def rows(backend, run_id, kind):
    """A run's rows of one kind, read back through a journal of its own (as another process would)."""
    other = backend.open()
    return [e["data"] for e in other.events(run_id) if e["kind"] == kind]


def test_a_tool_listing_a_non_utf8_file_name_is_journaled_and_read_back_exactly(project, capsys):
    root = project.project
    (root / "demo.json").write_text(json.dumps([call("listing"), {"text": "listed"}]))
    code, out, err = cli(capsys, "run", "spec.plait", "--json")
    assert code == 0, err
    [run] = runs(capsys)
    [completed] = rows(project, run["id"], "tool_completed")
    assert completed["value"] == [os.fsdecode(b"caf\xe9.txt"), "plain.txt"] and not completed["is_error"]
    # The run is whole in the journal: resuming it replays, it does not fail the way the first write did.
    code, _, err = cli(capsys, "resume", run["id"], "--json")
    assert code == 0, err


@pytest.mark.parametrize("provider", ["openai-compatible", "openai", "anthropic", "google"])
def test_a_non_utf8_file_name_a_tool_listed_reaches_an_http_model_as_escaped_text(
    tmp_path, capsys, monkeypatch, provider
):
    """A real provider's request body is UTF-8 JSON: the listing's lone surrogate failed the run there
    (UnicodeEncodeError) after the journal had taken it. The model is sent it as the text `\\udce9`."""
    from plait.runtime.providers.fake import FAKE_KEY_ENV, FakeServer

    monkeypatch.setenv(FAKE_KEY_ENV, "k")
    files = tmp_path / "files"
    files.mkdir()
    (files / os.fsdecode(b"caf\xe9.txt")).write_text("x")
    (tmp_path / "text_tools.py").write_text(TOOLS)
    with FakeServer([call("listing"), {"text": "listed"}]) as server:
        (tmp_path / "spec.plait").write_text(
            SPEC.replace(
                'model demo = "scripted/demo" { script = "demo.json" }',
                f'model demo = "{provider}/fake-model" {{ base_url = "{server.base_url(provider)}", '
                f'api_key = env("{FAKE_KEY_ENV}") }}',
            )
        )
        monkeypatch.chdir(tmp_path)
        code, out, err = cli(capsys, "run", "spec.plait")
        sent = server.requests[-1].body
    assert code == 0 and out.strip() == "listed", err

    def texts(value):
        if isinstance(value, str):
            yield value
        elif isinstance(value, dict):
            for item in value.values():
                yield from texts(item)
        elif isinstance(value, list):
            for item in value:
                yield from texts(item)

    assert any("caf\\udce9.txt" in text for text in texts(sent)), sent


def test_a_failed_call_after_a_non_utf8_listing_is_retried_by_resume(project, capsys):
    """The call after the listing fails (a server error): resuming retries it from the journal's rows, which hold
    the listing exactly, and the tool is not run again."""
    root = project.project
    replies = [call("listing"), {"error": {"kind": "server_error", "message": "down"}}, {"text": "listed"}]
    (root / "demo.json").write_text(json.dumps(replies))
    code, _, err = cli(capsys, "run", "spec.plait")
    assert code == 1 and "server_error" in err
    [run] = runs(capsys)
    code, out, err = cli(capsys, "resume", run["id"], "--json")
    assert code == 0 and json.loads(out)["output"] == "listed", err
    [completed] = rows(project, run["id"], "tool_completed")  # one listing: replayed, not run again
    assert completed["value"] == [os.fsdecode(b"caf\xe9.txt"), "plain.txt"]


def test_a_model_reply_with_a_lone_surrogate_is_stored_and_replayed_exactly(backend):
    """In the text, the arguments and the call id (which names the call's rows): a resume finds every row again."""
    replies = [
        {"tool_calls": [{"id": "call-\udc80", "name": "echo", "arguments": {"text": "\ud800 and \udfff"}}]},
        {"text": "got \ud800"},
    ]
    seen = []
    tools = {"echo": tool("echo", lambda text: seen.append(text) or text, props={"text": "string"})}
    eng = engine(backend, replies, tools)
    run = eng.start("go")
    result = go(run)
    go(eng.aclose())
    assert result.stop_reason == "done" and result.output == "got \ud800" and seen == ["\ud800 and \udfff"]
    other = backend.open()
    stored = other.run(run.id)
    assert stored["status"] == "done" and stored["result"]["output"] == "got \ud800"
    [first, _] = rows(backend, run.id, "model_reply")
    assert first["message"]["tool_calls"][0]["arguments"] == {"text": "\ud800 and \udfff"}
    assert rows(backend, run.id, "tool_completed")[0]["content"] == "\ud800 and \udfff"
    # Resumed in another engine (no replies left): everything is replayed from the rows, nothing called again.
    again = engine(backend, [], tools)
    resumed = go(again.restore(run.id).resume())
    go(again.aclose())
    assert resumed.stop_reason == "done" and resumed.output == "got \ud800" and seen == ["\ud800 and \udfff"]


def test_a_nul_in_a_models_call_id_and_text_is_stored_and_the_next_run_is_untouched(backend):
    """PostgreSQL's text holds no NUL: a model's tool call id with one (the row's key) failed the write and the run,
    and the write left buffered failed every later run of the process. Now both runs finish and resume exactly."""
    replies = [
        {"tool_calls": [{"id": "call-\x00x", "name": "echo", "arguments": {"text": "a\x00b"}}]},
        {"text": "got \x00"},
    ]
    seen = []
    tools = {"echo": tool("echo", lambda text: seen.append(text) or text, props={"text": "string"})}
    eng = engine(backend, replies, tools)
    first = eng.start("go\x00")
    result = go(first)
    assert result.stop_reason == "done" and result.output == "got \x00", result.error
    second = go(eng.start("again"))  # a run of its own (the same script): not failed by the first one's rows
    go(eng.aclose())
    assert second.stop_reason == "done" and second.output == "got \x00", second.error
    assert backend.open().run(first.id)["input"] == "go\x00"
    again = engine(backend, [], tools)
    resumed = go(again.restore(first.id).resume())
    go(again.aclose())
    assert resumed.stop_reason == "done" and resumed.output == "got \x00" and seen == ["a\x00b"] * 2


def test_a_non_utf8_byte_in_input_from_argv_is_kept_exactly(project, capsys):
    root = project.project
    (root / "demo.json").write_text(json.dumps([{"text": "ok"}]))
    code, _, err = cli(capsys, "run", "spec.plait", "--input", f"caf{BAD_BYTE}")
    assert code == 0, err
    [run] = runs(capsys)
    assert run["status"] == "done"
    [admit] = rows(project, run["id"], "admit")
    assert admit["input"] == f"caf{BAD_BYTE}" and project.open().run(run["id"])["input"] == f"caf{BAD_BYTE}"


def test_one_batch_row_with_a_lone_surrogate_does_not_fail_the_others(project, capsys):
    root = project.project
    (root / "demo.json").write_text(json.dumps([{"text": "ok"}]))
    spec = root / "one.plait"
    spec.write_text(
        'model demo = "scripted/demo" { script = "demo.json" }\nstep main { model = demo, prompt = "{{input}}" }\n'
    )
    (root / "demo.json").write_text(json.dumps([{"text": "ok"}] * 3))
    # The JSON-lines file spells the surrogate as an escape, as json.dumps writes it.
    (root / "rows.jsonl").write_text('"first"\n"bad \\ud800"\n"third"\n')
    code, out, err = cli(capsys, "batch", spec, "rows.jsonl", "--concurrency", "1")
    assert code == 0, err
    results = [json.loads(line) for line in out.splitlines()]
    assert [r["stop_reason"] for r in results] == ["done", "done", "done"]
