"""A resume walks again through decisions an earlier attempt took: each is journaled, and traced, once."""

from __future__ import annotations

import json

from plait.cli import main

SPEC = """plait 0.2

ask first "First?" {
  answer { decision: "yes" | "no" }
}

ask second "Second?" {
  answer { decision: "yes" | "no" }
}

chain main = first -> second
"""


def test_an_ask_answered_before_the_next_stop_is_decided_once(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.plait").write_text(SPEC)
    assert main(["run", "a.plait", "--input", "go", "--json"]) == 3
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    assert main(["resume", run_id, "--answer", 'first={"decision": "yes"}']) == 3
    assert main(["resume", run_id, "--answer", 'second={"decision": "no"}', "--json"]) == 0
    decisions = json.loads(capsys.readouterr().out)["decisions"]
    assert [(d["name"], d["answer"]["decision"]) for d in decisions] == [("first", "yes"), ("second", "no")]
    capsys.readouterr()
    assert main(["trace", run_id]) == 0
    trace = capsys.readouterr().out
    assert trace.count("first answered") == 1 and trace.count("second answered") == 1
