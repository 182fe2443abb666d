"""`plait batch --budget`: each row's run gets its own budget (as `plait run --budget`), a row that would go over
stops alone (paused for a person, or failed with `on_exceeded=fail`), and a paused row is raised with `plait resume`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from batch_helpers import results
from plait.cli import main

SPEC = """plait 0.2
model m = "scripted/m" { script = "replies.json", price = { input = 1.0, output = 2.0 } }
step a { model = m, prompt = "A: {{input}}" }
step b { model = m, prompt = "B: {{input}}" }
chain main = a -> b
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "spec.plait").write_text(SPEC)
    usage = {"input_tokens": 1000, "output_tokens": 100}
    (tmp_path / "replies.json").write_text(json.dumps([{"text": f"r{i}", "usage": usage} for i in range(12)]))
    (tmp_path / "in.jsonl").write_text('"one"\n"two"\n')
    return tmp_path


def batch(root: Path, *extra: str) -> int:
    argv = ["batch", str(root / "spec.plait"), str(root / "in.jsonl"), "-o", str(root / "out.jsonl"), *extra]
    return main(argv)


def test_each_row_pauses_at_its_own_budget_and_a_raise_finishes_it(project: Path, capsys) -> None:
    assert batch(project, "--budget", "model_calls=1", "--concurrency", "1") == 3
    rows = results(project / "out.jsonl")
    assert [r["stop_reason"] for r in rows] == ["pause", "pause"]  # each row had one call of its own, not one in all
    assert all("the run's budget would be exceeded: 1 model calls spent of 1" in r["waiting"] for r in rows)
    assert [r["tokens"]["input_tokens"] for r in rows] == [1000, 1000]
    capsys.readouterr()

    assert main(["resume", rows[0]["run_id"], "--dir", str(project), "--budget", "model_calls=2", "--json"]) == 0
    done = json.loads(capsys.readouterr().out)
    assert done["stop_reason"] == "done" and done["model_calls"] == 2


def test_a_failing_budget_fails_its_rows_alone(project: Path) -> None:
    (project / "in.jsonl").write_text('"one"\n')
    assert batch(project, "--budget", "model_calls=1", "--budget", "on_exceeded=fail") == 1
    [row] = results(project / "out.jsonl")
    assert row["stop_reason"] == "error" and row["error"]["kind"] == "budget_exceeded"


def test_without_a_budget_the_rows_run_to_the_end(project: Path) -> None:
    assert batch(project) == 0
    assert [r["stop_reason"] for r in results(project / "out.jsonl")] == ["done", "done"]


def test_a_bad_budget_is_a_usage_error_before_anything_runs(project: Path, capsys) -> None:
    assert batch(project, "--budget", "dollars=5") == 2
    assert "`dollars` is not a budget key" in capsys.readouterr().err
    assert not (project / "out.jsonl").exists()
