"""A tool's `approval = CONDITION` over the call's arguments (asks only for the calls it holds for) and the
`approve_same` answer (this call, and the same call again later in the run, without asking): journaled, kept by a
resume, shown by `plait trace` (src/plait/runtime/steps/check_interrupts.py)."""

from __future__ import annotations

import json

from plait.cli import main

SPEC = """plait 0.3
model m = "scripted/m" { script = "m.replies.json" }

tool pay "Pay someone" {
  run      = python("bank:pay")
  approval = amount > 100
  params { amount: int, to: string }
}

agent main { model = m, tools = [pay] }
"""

BANK = """
import json, pathlib

def pay(amount, to):
    log = pathlib.Path(__file__).with_name("paid.log")
    with log.open("a") as f:
        f.write(json.dumps([amount, to]) + "\\n")
    return f"paid {amount} to {to}"
"""


def _call(amount: int, to: str = "ann") -> dict:
    return {"tool_calls": [{"name": "pay", "arguments": {"amount": amount, "to": to}}]}


def _spec(tmp_path, replies: list) -> None:
    (tmp_path / "spec.plait").write_text(SPEC)
    (tmp_path / "bank.py").write_text(BANK)
    (tmp_path / "m.replies.json").write_text(json.dumps(replies))


def _paid(tmp_path) -> list:
    log = tmp_path / "paid.log"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def _run(args, capsys) -> tuple[int, dict]:
    status = main([*args, "--json"])
    return status, json.loads(capsys.readouterr().out)


def test_a_call_the_condition_does_not_hold_for_runs_without_asking(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _spec(tmp_path, [_call(20), {"text": "done"}])
    status, out = _run(["run", "spec.plait", "--input", "go"], capsys)
    assert status == 0 and out["output"] == "done"
    assert _paid(tmp_path) == [[20, "ann"]]


def test_a_call_the_condition_holds_for_waits_for_a_person(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _spec(tmp_path, [_call(500), {"text": "done"}])
    status, out = _run(["run", "spec.plait", "--input", "go"], capsys)
    assert status == 3 and _paid(tmp_path) == []
    [pending] = out["pending"]
    assert pending["tool"] == "pay" and pending["arguments"] == {"amount": 500, "to": "ann"}


def test_approve_same_is_remembered_across_resumes_for_the_same_arguments_only(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    replies = [_call(500), _call(900), _call(500), {"text": "done"}]
    _spec(tmp_path, replies)
    status, out = _run(["run", "spec.plait", "--input", "go"], capsys)
    assert status == 3
    run_id, first = out["run_id"], out["pending"][0]["id"]
    # A different call (900) still asks; after the run is restored from its journal, the same call (500 to ann)
    # again does not.
    status, out = _run(["resume", run_id, "--decide", f"{first}=approve_same"], capsys)
    assert status == 3 and _paid(tmp_path) == [[500, "ann"]]
    [pending] = out["pending"]
    assert pending["arguments"] == {"amount": 900, "to": "ann"}
    status, out = _run(["resume", run_id, "--decide", f"{pending['id']}=approve"], capsys)
    assert status == 0 and out["output"] == "done"
    assert _paid(tmp_path) == [[500, "ann"], [900, "ann"], [500, "ann"]]
    assert main(["trace", run_id]) == 0
    trace = capsys.readouterr().out
    assert "approved, and the same call again in this run" in trace
