"""`plait runs diff` on two runs whose model asked for the same tool call and a person edited one of them: the first
divergence is that tool call, argument by argument (the approvals before it are a person's, not a call)."""

from __future__ import annotations

import json

from plait.cli import main
from test_prompts import APPROVAL_SPEC, project, send_call


def stopped_then_decided(capsys, spec, decision: str) -> str:
    assert main(["run", str(spec), "--input", "go", "--json"]) == 3
    report = json.loads(capsys.readouterr().out)
    [pending] = report["pending"]
    assert main(["run", str(spec), "--resume", report["run_id"], "--decide", f"{pending['id']}={decision}"]) == 0
    capsys.readouterr()
    return report["run_id"]


def test_an_edited_tool_call_is_the_first_divergence_argument_by_argument(tmp_path, capsys, monkeypatch):
    spec = project(tmp_path, APPROVAL_SPEC, [send_call(to="ann", copies=1), {"text": "done"}])
    monkeypatch.chdir(tmp_path)
    a = stopped_then_decided(capsys, spec, "approve")
    b = stopped_then_decided(capsys, spec, 'edit:{"to": "bob", "copies": 1}')
    assert main(["runs", "diff", a, b, "--json"]) == 1
    first = json.loads(capsys.readouterr().out)["divergence"]
    assert (first["call"], first["tool"], first["what"]) == ("tool", "send", "arguments")
    assert first["arguments"] == [{"path": "to", "a": "ann", "b": "bob"}]
    assert main(["runs", "diff", a, b]) == 1
    out = capsys.readouterr().out
    assert "the tool was called with other arguments" in out and 'to: A "ann"  B "bob"' in out
