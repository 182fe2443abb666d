"""`plait test` with cassettes and coverage: `--record` writes a test's `cassette(FILE)` from its models, a plain run
replays it offline (a prompt edit fails with the first difference), `--coverage` reports what the tests reached and
`--min-coverage` exits 7 below it."""

from __future__ import annotations

import json

from plait.cli import EXIT_COVERAGE, main

SPEC = """
model fast = "scripted/fast" { script = "replies.json" }

step classify {
  model  = fast
  prompt = "Sort: {{input}}"
  output { category: "billing" | "tech" }
}

step billing { model = fast, prompt = "Billing: {{input.category}}" }
step tech { model = fast, prompt = "Tech: {{input.category}}" }

route triage on input.category {
  "billing" -> billing
  else      -> tech
}

chain main = classify -> triage
"""

TESTS = """
import "triage.plait"

test billing {
  input   = "charged twice"
  replies = cassette("billing.cassette.json")
  expect case(triage) == "billing"
  expect output == "Refunded."
}
"""

REPLIES = {"classify": [{"output": {"category": "billing"}}], "billing": [{"text": "Refunded."}]}


def project(tmp_path):
    (tmp_path / "triage.plait").write_text(SPEC)
    (tmp_path / "triage.test.plait").write_text(TESTS)
    (tmp_path / "replies.json").write_text(json.dumps(REPLIES))
    return str(tmp_path / "triage.test.plait")


def test_record_then_replay_offline_then_a_prompt_edit_fails_with_the_difference(tmp_path, capsys):
    tests = project(tmp_path)
    assert main(["test", tests]) == 1  # no cassette yet
    assert "cannot read cassette" in capsys.readouterr().out
    assert main(["test", tests, "--record"]) == 0
    capsys.readouterr()
    cassette = json.loads((tmp_path / "billing.cassette.json").read_text())
    assert [i["agent"] for i in cassette["interactions"]] == ["classify", "billing"]
    # The script now answers otherwise: the replay never reads it.
    (tmp_path / "replies.json").write_text(json.dumps({"classify": [{"output": {"category": "tech"}}]}))
    assert main(["test", tests]) == 0
    capsys.readouterr()
    (tmp_path / "triage.plait").write_text(SPEC.replace("Sort: {{input}}", "Classify: {{input}}"))
    assert main(["test", tests]) == 1
    out = capsys.readouterr().out
    assert "first difference: message 1 (user)" in out
    assert '"Sort: charged twice"' in out and '"Classify: charged twice"' in out


def test_coverage_of_the_tests_and_the_floor(tmp_path, capsys):
    tests = project(tmp_path)
    assert main(["test", tests, "--record"]) == 0
    capsys.readouterr()
    report = tmp_path / "cov.json"
    assert main(["test", tests, "--coverage", str(report), "--min-coverage", "100"]) == EXIT_COVERAGE
    captured = capsys.readouterr()
    assert "triage else" in captured.out and "below --min-coverage 100%" in captured.err
    items = {i["id"]: i["runs"] for e in json.loads(report.read_text())["entries"] for i in e["items"]}
    assert items['case:triage="billing"'] == 1 and items["case:triage=else"] == 0
    assert main(["test", tests, "--coverage", "--min-coverage", "70"]) == 0
