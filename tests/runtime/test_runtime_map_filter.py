"""A map's `filter` (items it does not hold for are skipped) and `on_error = drop` (a failed item is left out of the
list): the output, the decisions a run records, and a resumed run (src/plait/runtime/mapping.py)."""

from __future__ import annotations

import json

import plait
from plait.runtime.engine import Engine

SPEC = """
model m = "scripted/m" { script = "m.replies.json" }

step triage {
  model = m
  prompt = "Sort {{input}}"
  output { tickets: list[object { title: string, priority: "high" | "low" }] }
}

step answer { model = m, prompt = "Answer {{input.title}}" }

map urgent = answer { over = triage.tickets, filter = priority == "high" }

chain main = triage -> urgent
"""

TICKETS = [
    {"title": "a", "priority": "low"},
    {"title": "b", "priority": "high"},
    {"title": "c", "priority": "low"},
    {"title": "d", "priority": "high"},
]


def _engine(tmp_path, spec=SPEC, replies=("one", "two", "three")):
    (tmp_path / "spec.plait").write_text(spec)
    first = {"text": json.dumps({"tickets": TICKETS})}
    (tmp_path / "m.replies.json").write_text(json.dumps([first] + [{"text": r} for r in replies]))
    return Engine.from_spec(tmp_path / "spec.plait")


def test_a_filter_runs_only_the_items_it_holds_for_and_lists_only_their_results(tmp_path):
    result = plait.run(_engine(tmp_path), "go")
    assert result.stop_reason == "done"
    assert result.output == ["one", "two"]
    assert result.report.model_calls == 3
    skipped = [d for d in result.report.decisions if d.get("kind") == "map" and d.get("status") == "skipped"]
    assert [d["index"] for d in skipped] == [0, 2]


def test_an_expression_filter_reads_the_item(tmp_path):
    spec = SPEC.replace('filter = priority == "high"', "filter = \"{{ 'c' != title }}\"")
    result = plait.run(_engine(tmp_path, spec), "go")
    assert result.output == ["one", "two", "three"]


CODE = """
def check(input):
    if input == "bad":
        raise ValueError("no")
    return input.upper()
"""

DROP = """
input { words: list[string] }

step shout { run = python("words:check") }

map all = shout { over = run.input.words, on_error = drop }
"""


def test_a_map_with_on_error_drop_leaves_failed_items_out(tmp_path):
    (tmp_path / "words.py").write_text(CODE)
    (tmp_path / "spec.plait").write_text(DROP)
    result = plait.run(Engine.from_spec(tmp_path / "spec.plait"), {"words": ["a", "bad", "c"]})
    assert result.stop_reason == "done"
    assert result.output == ["A", "C"]
    assert any(w["code"] == "map_item_failed" and "dropped" in w["message"] for w in result.report.warnings)


def test_collect_still_keeps_the_error_in_place(tmp_path):
    (tmp_path / "words.py").write_text(CODE)
    (tmp_path / "spec.plait").write_text(DROP.replace("drop", "collect"))
    result = plait.run(Engine.from_spec(tmp_path / "spec.plait"), {"words": ["a", "bad", "c"]})
    assert result.output[0] == "A" and result.output[2] == "C" and "error" in result.output[1]


def test_a_journaled_run_traces_each_skipped_item(tmp_path, capsys, monkeypatch):
    from plait.cli import main

    _engine(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["run", "spec.plait", "--input", "go", "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    assert main(["trace", run_id]) == 0
    trace = capsys.readouterr().out
    assert "urgent item 0 skipped by its filter" in trace and "urgent item 2 skipped by its filter" in trace
    assert "urgent item 1 done" in trace


RESUME = """
input { words: list[string] }

step check { run = python("words:logged") }

ask confirm "Keep {{input}}?" { answer { keep: bool } }

map all = check -> confirm { over = run.input.words, on_error = drop, concurrency = 1 }
"""

LOGGED = """
import pathlib

def logged(input):
    with pathlib.Path(__file__).with_name("ran.log").open("a") as f:
        f.write(input + "\\n")
    if input == "bad":
        raise ValueError("no")
    return input
"""


def test_a_resumed_map_does_not_run_a_dropped_item_again(tmp_path, capsys, monkeypatch):
    from plait.cli import main

    (tmp_path / "words.py").write_text(LOGGED)
    (tmp_path / "spec.plait").write_text(RESUME)
    monkeypatch.chdir(tmp_path)
    assert main(["run", "spec.plait", "--input", '{"words": ["bad", "ok"]}', "--json"]) == 3
    out = json.loads(capsys.readouterr().out)
    [pending] = out["pending"]
    assert main(["resume", out["run_id"], "--answer", f'{pending["id"]}={{"keep": true}}', "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["output"] == [{"keep": True}]
    assert (tmp_path / "ran.log").read_text().splitlines() == ["bad", "ok"]


def test_coverage_counts_a_skipped_item_as_its_own_path(tmp_path, capsys, monkeypatch):
    from plait.cli import main

    _engine(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["run", "spec.plait", "--input", "go", "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    assert run_id and main(["coverage", "spec.plait", "--json"]) in (0, 7)
    report = json.loads(capsys.readouterr().out)
    items = {i["id"]: i["runs"] for entry in report["entries"] for i in entry["items"]}
    assert items["map:urgent:skipped"] == 1 and items["map:urgent:done"] == 1
    assert items["map:urgent:error"] == 0


def test_the_live_view_says_an_item_was_skipped_not_failed():
    from plait.cli.live import describe
    from plait.runtime.events import Event

    skipped = Event("map_item", ("main", "urgent"), {"map": "urgent", "index": 2, "status": "skipped"})
    failed = Event("map_item", ("main", "urgent"), {"map": "urgent", "index": 3, "status": "error"})
    assert describe(skipped) == "urgent: item 2 skipped by its filter"
    assert describe(failed) == "urgent: item 3 failed"
