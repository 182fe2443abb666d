"""`plait run` / `plait chat` and `plait.run` end to end: compiled .plait specs on the scripted provider."""

from __future__ import annotations

import asyncio
import io
import json
import sys

import pytest

import plait
from plait.cli import main
from runtime_helpers import call

SPEC = """
model demo = "scripted/demo" { script = "demo.json" }

tool add "Add two numbers." {
  params {
    a: int
    b: int
  }
  run = python("cli_e2e_tools:add")
}

tool send "Send a message." {
  params { to: string }
  run = python("cli_e2e_tools:send")
  approval = required
}

agent main {
  model = demo
  system = "You add."
  tools = [add, send]
  max_steps = 3
}
"""

TOOLS = "def add(a, b):\n    return a + b\n\ndef send(to):\n    return 'sent to ' + to\n"


def write(tmp_path, replies, spec=SPEC):
    (tmp_path / "spec.plait").write_text(spec)
    (tmp_path / "cli_e2e_tools.py").write_text(TOOLS)
    (tmp_path / "demo.json").write_text(json.dumps(replies))
    return str(tmp_path / "spec.plait")


def stored_runs(project):
    from plait.runtime.store import SQLiteJournal, journal_path

    journal = SQLiteJournal(journal_path(project))
    try:
        return journal.runs()
    finally:
        journal.close()


def cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def test_run_prints_output_and_exits_0(tmp_path, capsys):
    spec = write(tmp_path, [call("add", a=2, b=3), {"text": "5"}])
    code, out, err = cli(capsys, "run", spec, "--input", "2+3")
    assert (code, out) == (0, "5\n") and "main: tool add ok" in err
    assert [r["status"] for r in stored_runs(tmp_path)] == ["done"]


def test_json_report_has_the_documented_fields(tmp_path, capsys):
    spec = write(tmp_path, [call("add", a="x", b=3), call("add", a=2, b=3), {"text": "5"}])
    code, out, _ = cli(capsys, "run", spec, "--json")
    report = json.loads(out)
    assert code == 0 and report["stop_reason"] == "done" and report["output"] == "5" and report["model_calls"] == 3
    assert [(c["name"], c["arguments"], c["is_error"]) for c in report["tool_calls"]] == [
        ("add", {"a": "x", "b": 3}, True),
        ("add", {"a": 2, "b": 3}, False),
    ]
    assert [w["code"] for w in report["warnings"]] == ["tool_arguments_invalid"]
    assert report["usage"]["input_tokens"] > 0 and "error" not in report


def test_failure_is_one_line_exit_1_with_error_in_report(tmp_path, capsys):
    spec = write(tmp_path, [{"error": {"kind": "rate_limit", "message": "slow down"}}])
    code, out, err = cli(capsys, "run", spec, "--json")
    report = json.loads(out)
    assert code == 1 and report["stop_reason"] == "error"
    assert (
        report["error"]["type"] == "ProviderError"
        and report["error"]["kind"] == "rate_limit"
        and report["error"]["message"] == "slow down"
    )
    assert err.strip().splitlines()[-1].startswith("plait: run failed: rate_limit: slow down")
    [stored] = stored_runs(tmp_path)
    assert stored["status"] == "error" and stored["result"]["stop_reason"] == "error"


def test_max_steps_exits_4(tmp_path, capsys):
    spec = write(tmp_path, [call("add", a=1, b=1)] * 3)
    code, out, _ = cli(capsys, "run", spec)
    assert code == 4 and out == "stopped: reached max_steps (3)\n"


def test_interrupt_off_tty_exits_3_and_resumes_from_the_store(tmp_path, capsys):
    spec = write(tmp_path, [call("send", to="ann"), {"text": "sent it"}])
    code, out, err = cli(capsys, "run", spec, "--json")
    report = json.loads(out)
    assert code == 3 and report["stop_reason"] == "interrupt"
    [pending] = report["pending"]
    assert pending["tool"] == "send" and pending["arguments"] == {"to": "ann"} and pending["id"] in err
    code, out, _ = cli(
        capsys, "run", spec, "--resume", report["run_id"], "--decide", f'{pending["id"]}=edit:{{"to": "bob"}}', "--json"
    )
    report = json.loads(out)
    assert code == 0 and report["output"] == "sent it"
    assert report["tool_calls"][-1] == {
        "name": "send",
        "arguments": {"to": "bob"},
        "is_error": False,
        "agent": "main",
        "path": ["main"],
    }


def test_compile_errors_print_diagnostics_and_exit_1(tmp_path, capsys):
    spec = write(tmp_path, [], spec="agent main { model = nowhere }\n")
    code, out, err = cli(capsys, "run", spec)
    assert code == 1 and out == "" and "nowhere" in err


def test_input_file_and_stdin(tmp_path, capsys, monkeypatch):
    spec = write(tmp_path, [{"text": "a"}, {"text": "b"}])
    (tmp_path / "in.txt").write_text("from a file")
    assert cli(capsys, "run", spec, "--input-file", str(tmp_path / "in.txt"))[0] == 0
    monkeypatch.setattr(sys, "stdin", io.StringIO("from stdin"))
    code, out, _ = cli(capsys, "run", spec, "-", "--events")
    events = [json.loads(line) for line in out.splitlines()]
    assert (
        code == 0
        and events[1]["type"] == "agent_start"
        and events[1]["input"] == "from stdin"
        and events[-1]["type"] == "run_end"
    )


def test_chat_keeps_history_across_lines(tmp_path, capsys, monkeypatch):
    spec = write(tmp_path, {"main": [{"text": "hi Ann"}, {"text": "you are Ann"}]})
    monkeypatch.setattr(sys, "stdin", io.StringIO("I am Ann\nwho am I?\n"))
    code, out, _ = cli(capsys, "chat", spec)
    assert code == 0 and out.splitlines() == ["hi Ann", "you are Ann"]
    [saved] = (tmp_path / ".plait" / "chats").glob("*.json")
    assert [m["role"] for m in json.loads(saved.read_text())["run"]["messages"]] == [
        "user",
        "assistant",
        "user",
        "assistant",
    ]


COMPOSED = """
model demo  = "scripted/demo" { script = "demo.json" }

step summarize {
  model  = demo
  prompt = "Summarize: {{input}}"
}

step translate {
  model  = demo
  prompt = "Translate: {{input}}"
}

agent analyst_a { model = demo, system = "financial" }
agent analyst_b { model = demo, system = "risk" }

consolidate verdict {
  agents = [analyst_a, analyst_b]
  judge  = demo
  rounds = 2
}

step report {
  model  = demo
  prompt = "French: {{input.translate}} / Verdict: {{input.verdict}}"
}

chain main = summarize -> parallel(translate, verdict) -> report
"""


def test_plait_run_compiles_and_walks_chain_parallel_and_consolidate(tmp_path):
    replies = {
        "summarize": [{"text": "short"}],
        "translate": [{"text": "court"}],
        "analyst_a": [{"text": "rent"}],
        "analyst_b": [{"text": "rent too"}],
        "demo": [{"text": '{"agreed": true, "summary": "rent"}'}],
        "report": [{"text": "final paragraph"}],
    }
    spec = write(tmp_path, replies, spec=COMPOSED)
    result = plait.run(spec, "long text")
    assert (result.stop_reason, result.output) == ("done", "final paragraph")
    assert result.report.model_calls == 6


def test_arun_steps_through_events(tmp_path):
    spec = write(tmp_path, [call("add", a=1, b=2), {"text": "3"}])

    async def consume():
        started = plait.arun(spec, "1+2")
        types = [e.type async for e in started]
        return types, await started

    types, result = asyncio.run(consume())
    assert result.output == "3" and "tool_call_end" in types and types[-1] == "run_end"


def test_plait_run_raises_on_failure_with_report(tmp_path):
    spec = write(tmp_path, [])
    with pytest.raises(Exception) as info:
        plait.run(spec, "x")
    assert info.value.kind == "invalid_request" and info.value.report["stop_reason"] == "error"


def test_tty_prompt_asks_approve_edit_reject(monkeypatch, capsys):
    from plait.cli.run import ask_decisions
    from plait.runtime.outcomes import PendingCall

    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.delenv("VISUAL", raising=False)
    # No schema for `send` here: an edit is typed as JSON, and one that is not JSON is asked again.
    answers = ["x", "a", "e", "{bad", "e", '{"to": "bob"}', "r", "too risky"]
    monkeypatch.setattr(sys, "stdin", io.StringIO("".join(f"{a}\n" for a in answers)))
    pending = [PendingCall(f"main:c{i}", ("main",), "main", f"c{i}", "send", {"to": "ann"}) for i in range(3)]
    decisions = ask_decisions(pending)
    assert [(d.action, d.arguments, d.message) for d in decisions.values()] == [
        ("approve", None, None),
        ("edit", {"to": "bob"}, None),
        ("reject", None, "too risky"),
    ]
    assert "wants to call `send`" in capsys.readouterr().err


def test_failed_run_is_stored_and_resumes_from_the_failed_turn(tmp_path, capsys):
    spec = write(tmp_path, [call("add", a=2, b=3), {"error": {"kind": "server_error", "message": "overloaded"}}])
    code, out, _ = cli(capsys, "run", spec, "--json")
    failed = json.loads(out)
    assert code == 1 and failed["tool_calls"][0]["name"] == "add"
    replies = json.loads((tmp_path / "demo.json").read_text()) + [{"text": "5"}]
    (tmp_path / "demo.json").write_text(json.dumps(replies))
    code, out, _ = cli(capsys, "run", spec, "--resume", failed["run_id"], "--json")
    report = json.loads(out)
    # The tool that already ran is not run again; the model picks up from the failed turn.
    assert code == 0 and report["output"] == "5" and [c["name"] for c in report["tool_calls"]] == ["add"]


def test_chat_off_tty_exits_3_on_an_interrupt_and_1_on_a_failed_turn(tmp_path, capsys, monkeypatch):
    spec = write(tmp_path, {"main": [call("send", to="ann")]})
    monkeypatch.setattr(sys, "stdin", io.StringIO("send it\n"))
    code, _, err = cli(capsys, "chat", spec)
    assert code == 3 and 'send({"to": "ann"})' in err
    spec = write(tmp_path, {"main": [{"error": {"kind": "auth", "message": "bad key"}}]})
    monkeypatch.setattr(sys, "stdin", io.StringIO("hello\n"))
    code, _, err = cli(capsys, "chat", spec)
    assert code == 1 and err.strip().splitlines()[-1] == "plait: turn failed: auth: bad key"


def test_a_run_cut_off_mid_tool_is_stored_and_its_resume_asks_about_the_unknown_call(tmp_path):
    from plait.runtime.engine import Engine

    # A module name of its own: earlier tests left `cli_e2e_tools` in sys.modules.
    (tmp_path / "spec.plait").write_text(SPEC.replace("cli_e2e_tools:add", "cli_e2e_slow:slow_add"))
    started = tmp_path / "started"
    (tmp_path / "cli_e2e_slow.py").write_text(
        f"import pathlib, time\ndef slow_add(a, b):\n    pathlib.Path({str(started)!r}).touch()\n    time.sleep(0.5)\n    return a + b\n"
    )
    (tmp_path / "demo.json").write_text(json.dumps([call("add", a=1, b=2), {"text": "gave up on add"}]))
    engine = Engine.from_spec(tmp_path / "spec.plait")

    async def cut_off():
        run = engine.start("go")
        task = asyncio.ensure_future(run._wait())
        for _ in range(1000):  # cut off while the tool is running
            if started.exists():
                break
            await asyncio.sleep(0.01)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return run.id

    run_id = asyncio.run(cut_off())
    resumed = Engine.from_spec(tmp_path / "spec.plait").restore(run_id)
    # The tool was cut off mid-call: it may or may not have acted, and `add` is not idempotent, so a person decides.
    result = asyncio.run(resumed.resume())
    assert result.stop_reason == "pause" and "main:demo-1-1" in result.pause_reason and "retry" in result.pause_reason
    result = asyncio.run(resumed.resume({"main:demo-1-1": "skip"}))
    assert (result.stop_reason, result.output) == ("done", "gave up on add")
    told = [m.text for m in resumed.ctx.runs["main"].messages if m.role == "tool"]
    assert len(told) == 1 and "chose not to run it again" in told[0]


def test_two_specs_with_their_own_tools_py_each_run_their_own(tmp_path):
    async def tool_results(spec):
        run = plait.arun(spec, "go")
        try:
            return [e.data["content"] async for e in run if e.type == "tool_call_end"]
        finally:
            await run.engine.aclose()

    seen = []
    for name in ("first", "second"):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "tools.py").write_text(f"def which():\n    return 'from {name}'\n")
        spec = SPEC.replace("cli_e2e_tools:add", "tools:which").replace("params {\n    a: int\n    b: int\n  }", "")
        write(folder, [call("add"), {"text": "ok"}], spec)
        seen += asyncio.run(tool_results(folder / "spec.plait"))
    assert seen == ["from first", "from second"]


class _Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("no_color", ["", "1"])
def test_run_diagnostics_at_a_terminal_honour_no_color(tmp_path, monkeypatch, no_color):
    (tmp_path / "bad.plait").write_text("agent a { model = nope }\n")
    screen = _Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    monkeypatch.setenv("NO_COLOR", no_color)
    monkeypatch.setenv("TERM", "xterm")
    assert main(["run", str(tmp_path / "bad.plait")]) == 1
    assert "undefined name `nope`" in screen.getvalue()
    assert ("\033[" in screen.getvalue()) == (not no_color)
