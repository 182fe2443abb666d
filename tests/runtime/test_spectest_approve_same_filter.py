"""`plait test` with the 0.3 answers and filters: a test's `decisions` may say "approve_same", and `items(MAP)` counts
the items a map ran, not those its filter skipped."""

from __future__ import annotations

from plait.cli import main

SPEC = """plait 0.3
model m = "scripted/m" { script = "m.replies.json" }

tool pay "Pay someone" {
  run      = python("bank:pay")
  approval = amount > 100
  params { amount: int, to: string }
}

agent payer { model = m, tools = [pay] }

step plan {
  model  = m
  prompt = "Plan {{input}}"
  output { jobs: list[object { name: string, urgent: bool }] }
}

step work { model = m, prompt = "Do {{input.name}}" }

map urgent = work { over = plan.jobs, filter = urgent }

chain jobs = plan -> urgent
"""

TESTS = """plait 0.3
import "spec.plait"

test same "One answer approves the same payment twice" {
  entry     = payer
  input     = "pay ann twice"
  replies   = {
    payer = [
      { tool_calls = [{ name = "pay", arguments = { amount = 500, to = "ann" } }] },
      { tool_calls = [{ name = "pay", arguments = { amount = 500, to = "ann" } }] },
      { text = "paid" },
    ]
  }
  decisions = { pay = "approve_same" }
  expect output == "paid"
  expect approvals(pay) == 1
  expect calls(pay) == 2
}

test skipped "A filter's skipped items are not counted as run" {
  entry   = jobs
  input   = "week"
  replies = {
    plan = [{ output = { jobs = [{ name = "a", urgent = true }, { name = "b", urgent = false }] } }]
    work = [{ text = "done a" }]
  }
  expect items(urgent) == 1
  expect output == ["done a"]
}
"""


def test_approve_same_and_a_filtered_map_in_spec_tests(tmp_path, capsys, monkeypatch):
    (tmp_path / "spec.plait").write_text(SPEC)
    (tmp_path / "bank.py").write_text("def pay(amount, to):\n    return f'paid {amount} to {to}'\n")
    (tmp_path / "m.replies.json").write_text("[]")
    (tmp_path / "spec.test.plait").write_text(TESTS)
    monkeypatch.chdir(tmp_path)
    status = main(["test", "spec.test.plait", "--no-color"])
    out = capsys.readouterr()
    assert status == 0, out.out + out.err
