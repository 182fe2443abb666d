"""`plait trace` → decisions in words: an ask's answer by field, a route's case, a person's edit or rejection."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from plait.cli import main
from test_prompts import APPROVAL_SPEC, project, send_call

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def decision_lines(capsys, run_id, folder):
    assert main(["trace", run_id, "--dir", str(folder)]) == 0
    out = capsys.readouterr().out
    lines = [re.sub(r"^\s*\d+\.\d+s  ", "", line) for line in out.splitlines()[1:]]
    return [line for line in lines if line.startswith(("ask ", "route ", "human ", "loop ", "map "))]


def test_an_ask_and_the_route_it_feeds_read_as_sentences(tmp_path, capsys, monkeypatch):
    for f in (EXAMPLES / "approve").iterdir():
        if f.is_file():
            shutil.copy(f, tmp_path / f.name)
    monkeypatch.chdir(tmp_path)
    assert main(["run", "approve.plait", "--input-file", "request.json", "--json"]) == 3
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    answer = 'approval={"decision": "approve", "note": "under budget next quarter"}'
    assert main(["resume", run_id, "--answer", answer]) == 0
    capsys.readouterr()
    assert decision_lines(capsys, run_id, tmp_path) == [
        "ask    approval answered: decision = approve, note = under budget next quarter  @ main/approval",
        "route  decide: input.decision = approve → case approve → place_order  @ main/decide",
    ]


def test_a_persons_edit_and_rejection_read_as_what_they_did(tmp_path, capsys):
    replies = [send_call(to="ann", copies=1), send_call(to="cy", copies=9), {"text": "done"}]
    spec = project(tmp_path, APPROVAL_SPEC, replies)
    assert main(["run", str(spec), "--input", "go", "--json"]) == 3
    report = json.loads(capsys.readouterr().out)
    [first] = report["pending"]
    edit = f'{first["id"]}=edit:{{"to": "bob", "copies": 3}}'
    assert main(["run", str(spec), "--resume", report["run_id"], "--decide", edit, "--json"]) == 3
    [second] = json.loads(capsys.readouterr().out)["pending"]
    reject = f"{second['id']}=reject:nine copies is too many"
    assert main(["run", str(spec), "--resume", report["run_id"], "--decide", reject]) == 0
    capsys.readouterr()
    assert decision_lines(capsys, report["run_id"], tmp_path) == [
        f"human  {first['id']} edited, then approved: to = bob, copies = 3",
        f"human  {second['id']} rejected: nine copies is too many",
    ]
