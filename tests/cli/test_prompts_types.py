"""An ask whose `answer` is one type (plait 0.3: `answer Booking`, `answer list[Flight]`) at the command line: the
resume hint describes the records and gives an answer that fits, `--answer` is checked against the whole type,
and at a terminal a person picks the record and then types its fields (the discriminator is not asked)."""

from __future__ import annotations

import json
import os
import shlex
import sys

import pytest
from pty_terminal import Terminal

from plait.cli import main

SPEC = """plait 0.3

model demo = "scripted/demo" { script = "demo.json" }

type Flight { kind: "flight", number: string }
type Hotel { kind: "hotel", name: string, nights: int }
type Booking = Flight | Hotel

ask pick "Which booking for {{input}}?" { answer Booking }

step book_flight { model = demo, prompt = "Book flight {{input.number}}" }
step book_hotel { model = demo, prompt = "Book hotel {{input.name}} for {{input.nights}} nights" }

route book on input.kind {
  "flight" -> book_flight
  "hotel"  -> book_hotel
}

chain main = pick -> book
"""

LIST_SPEC = """plait 0.3

type Flight { kind: "flight", number: string }

ask legs "Which flights?" { answer list[Flight] }

chain main = legs
"""


def project(tmp_path, spec=SPEC):
    (tmp_path / "spec.plait").write_text(spec)
    (tmp_path / "demo.json").write_text(json.dumps([{"text": "booked"}]))
    return tmp_path / "spec.plait"


def _hint(err: str) -> list[str]:
    [hint] = [line for line in err.splitlines() if line.startswith("resume with: ")]
    return shlex.split(hint.removeprefix("resume with: "))


def test_a_union_answer_is_described_by_its_records_and_the_hint_answers_with_the_first(tmp_path, capsys, monkeypatch):
    spec = project(tmp_path)
    assert main(["run", str(spec), "--input", "trip"]) == 3
    err = capsys.readouterr().err
    assert "answer: one of: Flight (kind: flight; number: text) | Hotel (kind: hotel; name: text; nights:" in err
    argv = _hint(err)
    assert "--answer=pick=" + json.dumps({"kind": "flight", "number": "text"}) in argv
    monkeypatch.chdir(tmp_path)
    assert main(argv[1:]) == 0
    assert capsys.readouterr().out.strip() == "booked"


def test_answer_is_checked_against_the_record_its_discriminator_names(tmp_path, capsys, monkeypatch):
    spec = project(tmp_path)
    assert main(["run", str(spec), "--input", "trip"]) == 3
    run_id = _hint(capsys.readouterr().err)[4]
    monkeypatch.chdir(tmp_path)
    # A hotel without its nights fits neither record: a usage error, and the run still waits.
    assert main(["run", str(spec), "--resume", run_id, "--answer", 'pick={"kind": "hotel", "name": "Ritz"}']) == 2
    assert "does not fit" in capsys.readouterr().err
    # A discriminator no record has is the one problem named, with the records' values.
    assert main(["run", str(spec), "--resume", run_id, "--answer", 'pick={"kind": "boat"}']) == 2
    assert "$.kind: 'boat' is none of 'flight', 'hotel'" in capsys.readouterr().err
    answer = 'pick={"kind": "hotel", "name": "Ritz", "nights": 2}'
    assert main(["run", str(spec), "--resume", run_id, "--answer", answer]) == 0
    assert capsys.readouterr().out.strip() == "booked"


def test_a_list_answer_takes_a_json_list_of_its_records(tmp_path, capsys, monkeypatch):
    spec = project(tmp_path, LIST_SPEC)
    assert main(["run", str(spec)]) == 3
    err = capsys.readouterr().err
    assert "answer: a list of kind: flight; number: text" in err
    run_id = _hint(err)[4]
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(spec), "--resume", run_id, "--answer", 'legs={"kind": "flight", "number": "BA1"}']) == 2
    capsys.readouterr()
    legs = [{"kind": "flight", "number": "BA1"}, {"kind": "flight", "number": "LH2"}]
    assert main(["run", str(spec), "--resume", run_id, "--answer", "legs=" + json.dumps(legs), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["output"] == legs


@pytest.mark.slow
def test_a_union_answer_at_a_terminal_picks_the_record_then_asks_its_fields(tmp_path):
    spec = project(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR",)} | {"TERM": "xterm", "COLUMNS": "120"}
    run = Terminal([sys.executable, "-m", "plait", "run", str(spec), "--input", "trip"], tmp_path, env)
    screen = run.until(r"choose 1-2")
    assert "Which booking for trip?" in screen and "1) Flight, 2) Hotel" in screen
    os.write(run.fd, b"Hotel\n")
    screen = run.until(r"name: ")
    assert "kind" not in screen.split("2) Hotel")[-1]  # the record's discriminator is not asked
    os.write(run.fd, b"Ritz\n")
    run.until(r"nights \(a whole number\): ")
    os.write(run.fd, b"2\n")
    code, screen = run.finish()
    assert code == 0 and "booked" in screen
