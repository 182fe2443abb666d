"""Graph coverage from journaled runs: `plait coverage SPEC` reports per entry the runnables, route cases, loop exits,
approval answers and fallback edges the runs reached, `--min-coverage` fails below it (exit 7), and `plait render
--coverage FILE` marks what no run reached."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from plait.cli import EXIT_COVERAGE, main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

ROUTE = """
model fast = "scripted/fast" { script = "replies.json" }

step classify {
  model  = fast
  prompt = "Sort: {{input}}"
  output { category: "billing" | "tech" }
}

step billing { model = fast, prompt = "Billing" }
step tech { model = fast, prompt = "Tech" }

route triage on input.category {
  "billing" -> billing
  else      -> tech
}

chain main = classify -> triage
"""

GATED = """
model primary = "scripted/primary" { script = "primary.json" }
model backup = "scripted/backup" { script = "backup.json" }

tool send "Send a message." {
  params { to: string }
  run = python("coverage_tools:send")
  approval = required
}

agent main {
  model = primary
  fallback = [backup]
  tools = [send]
  max_steps = 3
}
"""


def coverage(spec, *extra, capsys) -> tuple[int, dict]:
    capsys.readouterr()  # what ran before
    code = main(["coverage", str(spec), "--json", *extra])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else {}


def reached(report: dict) -> dict[str, int]:
    return {item["id"]: item["runs"] for entry in report["entries"] for item in entry["items"]}


def test_loop_exits_are_covered_only_once_a_run_meets_the_condition_and_one_runs_out(tmp_path, capsys):
    folder = tmp_path / "polish"
    shutil.copytree(EXAMPLES / "polish", folder)
    spec = folder / "polish.plait"
    assert main(["run", str(spec), "--input", "It arrived broken."]) == 0
    code, report = coverage(spec, "--min-coverage", "100", capsys=capsys)
    assert code == EXIT_COVERAGE
    items = reached(report)
    assert items["loop:polish:met"] == 1
    assert items["loop:polish:exhausted"] == 0
    assert items["runnable:publish"] == 1
    revise = {"output": {"verdict": "revise", "feedback": "no"}}
    replies = {"draft": [{"text": "d"}] * 3, "review": [revise] * 3, "publish": [{"text": "p"}]}
    (folder / "polish.replies.json").write_text(json.dumps(replies))
    assert main(["run", str(spec), "--input", "It arrived broken."]) == 0
    code, report = coverage(spec, "--min-coverage", "100", capsys=capsys)
    assert code == 0
    assert reached(report)["loop:polish:exhausted"] == 1
    assert report["percent"] == 100.0 and report["entries"][0]["runs"] == 2


def test_route_cases_and_the_drawing_of_what_no_run_reached(tmp_path, capsys):
    spec = tmp_path / "triage.plait"
    spec.write_text(ROUTE)
    replies = {"classify": [{"output": {"category": "billing"}}], "billing": [{"text": "b"}], "tech": [{"text": "t"}]}
    (tmp_path / "replies.json").write_text(json.dumps(replies))
    assert main(["run", str(spec), "--input", "charged twice"]) == 0
    code, report = coverage(spec, "-o", str(tmp_path / "cov.json"), capsys=capsys)
    assert code == 0
    items = reached(report)
    assert items['case:triage="billing"'] == 1 and items["case:triage=else"] == 0
    assert items["runnable:tech"] == 0 and items["runnable:billing"] == 1
    assert report["percent"] == pytest.approx(100 * 5 / 7, abs=0.01)

    capsys.readouterr()
    assert main(["render", str(spec), "-f", "mermaid", "--coverage", str(tmp_path / "cov.json")]) == 0
    drawn = capsys.readouterr().out
    assert "  class n_tech missed" in drawn
    assert "  class n_triage partial" in drawn
    # The else edge (the only one not taken) is drawn as missed.
    edges = [line for line in drawn.splitlines() if "-->" in line or "==>" in line]
    missed = next(line for line in drawn.splitlines() if line.startswith("  linkStyle") and "c0392b" in line)
    assert [edges[int(i)] for i in missed.split()[1].split(",")] == ['  n_triage -->|"else"| n_tech']
    assert main(["render", str(spec), "-f", "dot", "--coverage", str(tmp_path / "cov.json")]) == 0
    dot = capsys.readouterr().out
    assert '"tech" [id="plait:tech"' in dot and 'fillcolor="#f5b7b1"' in dot

    # The table names each item; below the floor it exits 7 and says why.
    capsys.readouterr()
    assert main(["coverage", str(spec), "--min-coverage", "90"]) == EXIT_COVERAGE
    captured = capsys.readouterr()
    assert "triage else" in captured.out and "missed" in captured.out
    assert "coverage 71.4% is below --min-coverage 90%" in captured.err


def test_fallback_edges_and_approval_answers(tmp_path, capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "coverage_tools.py").write_text("def send(to):\n    return 'sent to ' + to\n")
    spec = tmp_path / "gated.plait"
    spec.write_text(GATED)
    (tmp_path / "primary.json").write_text(json.dumps([{"error": {"kind": "rate_limit"}}] * 2))
    backup = [{"tool_calls": [{"name": "send", "arguments": {"to": "ann"}}]}, {"text": "not sent"}]
    (tmp_path / "backup.json").write_text(json.dumps(backup))
    assert main(["run", str(spec), "--input", "tell ann", "--json"]) == 3
    stopped = json.loads(capsys.readouterr().out)
    pending = stopped["pending"][0]["id"]
    code, report = coverage(spec, capsys=capsys)
    items = reached(report)
    assert items["fallback:main->backup"] == 1
    assert items["approval:main:send:reject"] == 0
    assert main(["run", str(spec), "--resume", stopped["run_id"], "--decide", f"{pending}=reject"]) == 0
    capsys.readouterr()
    items = reached(coverage(spec, capsys=capsys)[1])
    assert items["approval:main:send:reject"] == 1
    assert items["approval:main:send:approve"] == 0 and items["approval:main:send:edit"] == 0


def test_bad_input_is_a_clear_error(tmp_path, capsys):
    spec = tmp_path / "triage.plait"
    spec.write_text(ROUTE)
    (tmp_path / "replies.json").write_text("{}")
    assert main(["coverage", str(spec)]) == 2
    assert "no run journal" in capsys.readouterr().err
    (tmp_path / "cov.json").write_text('{"format": "plait-coverage", "version": 3}')
    assert main(["render", str(spec), "-f", "mermaid", "--coverage", str(tmp_path / "cov.json")]) == 2
    assert "has version 3" in capsys.readouterr().err
    assert main(["render", str(spec), "-f", "mermaid", "--coverage", str(tmp_path / "gone.json")]) == 2
    assert "cannot read coverage file" in capsys.readouterr().err
