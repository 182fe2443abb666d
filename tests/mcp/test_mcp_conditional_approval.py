"""An MCP server's `approval` may gate a tool on a condition over the call's arguments
(`approval = { echo = text != "hello" }`): checked against the tool's locked input schema (P313), and at run
time only a call it holds for waits for a person; the others run at once. `required` in the map gates every call."""

from __future__ import annotations

import json
import sys

import pytest

pytest.importorskip("mcp")

from mcp_helpers import FLAKY, locked_spec  # noqa: E402

from plait.cli import main  # noqa: E402

pytestmark = pytest.mark.slow

COMMAND = json.dumps([sys.executable, str(FLAKY)])


def test_a_condition_is_checked_against_the_locked_input_schema(tmp_path, capsys):
    mcp = f'mcp flaky {{\n  command  = {COMMAND}\n  approval = {{ echo = txt == "x", fail = reason > 3 }}\n}}'
    spec = locked_spec(tmp_path, "typed", [], mcp, "flaky")
    capsys.readouterr()
    assert main(["check", str(spec)]) == 1
    err = capsys.readouterr().out
    assert "error[P313]: `approval` reads `txt`, which the arguments of `echo`" in err
    assert "did you mean `text`?" in err
    assert "P313" in err.split("reads `txt`", 1)[1]  # `reason` is a string: `> 3` is reported too
    assert err.count("error[P313]") == 2, err


def test_only_a_call_the_condition_holds_for_waits_for_approval(tmp_path, capsys):
    replies = [
        {"tool_calls": [{"name": "echo", "arguments": {"text": "hello"}}]},
        {"tool_calls": [{"name": "echo", "arguments": {"text": "launch"}}]},
        {"text": "done"},
    ]
    mcp = f'mcp flaky {{\n  command  = {COMMAND}\n  approval = {{ echo = text != "hello" }}\n}}'
    spec = locked_spec(tmp_path, "gated", replies, mcp, "flaky")
    capsys.readouterr()
    assert main(["check", str(spec)]) == 0
    capsys.readouterr()
    code = main(["run", str(spec), "--input", "go", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 3 and report["stop_reason"] == "interrupt", report
    # The call the condition does not hold for ran without asking; the other waits.
    assert [(c["name"], c["arguments"]) for c in report["tool_calls"]] == [("echo", {"text": "hello"})]
    (pending,) = report["pending"]
    assert pending["tool"] == "echo" and pending["arguments"] == {"text": "launch"}
    code = main(["run", str(spec), "--resume", report["run_id"], "--decide", f"{pending['id']}=approve", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["output"] == "done", report
    assert [c["arguments"] for c in report["tool_calls"]] == [{"text": "hello"}, {"text": "launch"}]
