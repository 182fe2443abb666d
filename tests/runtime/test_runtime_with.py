"""plait 0.3 `with` at run time: the bound record is what a step, agent, code step or ask receives; a record
builder returns it; each binding is journaled as a `with` decision (src/plait/runtime/bindings.py)."""

from __future__ import annotations

import json

import plait
from plait.cli import main
from spec_helpers import run_seeing, write_spec

SPEC = """
plait 0.3
input { topic: string }
state { count: int? }
step planner {
  model  = m
  prompt = "Plan {{run.input.topic}}"
  output { title: string, tasks: list[string] }
}
step write {
  with   { task: input, at: map.index, title: planner.title }
  model  = m
  prompt = "Write {{input.task}} ({{input.at}}) of {{input.title}}"
}
map write_all = write { over = planner.tasks, concurrency = 1 }
step pack { with { title: planner.title, sections: write_all, topic: run.input.topic } }
step count { with { sections: input.sections, seen: state.count }, run = python("steps:count") }
agent reviewer {
  with   { draft: pack, n: count, missing: planner.title }
  model  = m
  system = "You review {{input.draft.title}}."
  prompt = "Review {{input.draft.sections}} ({{input.n}} sections, about {{input.missing}})"
}
chain main = planner -> write_all -> pack -> count -> reviewer
"""
STEPS = """
def count(sections, seen):
    return len(sections) + (seen or 0)
"""
REPLIES = [
    {"output": {"title": "T", "tasks": ["a", "b"]}},
    {"text": "A"},
    {"text": "B"},
    {"text": "fine"},
]


def test_each_runnable_receives_what_its_with_binds(tmp_path):
    spec = write_spec(tmp_path, SPEC, REPLIES, **{"steps.py": STEPS})
    result, seen = run_seeing(spec, {"topic": "x"})
    assert result.error is None and result.output == "fine"
    assert [text for _, text in seen] == [
        "Plan x",
        "Write a (0) of T",
        "Write b (1) of T",
        'Review ["A", "B"] (2 sections, about T)',
    ]
    given = {d["name"]: d["record"] for d in result.report.decisions if d["kind"] == "with"}
    assert given["pack"] == {"title": "T", "sections": ["A", "B"], "topic": "x"}
    assert given["count"] == {"sections": ["A", "B"], "seen": None}
    assert given["reviewer"] == {"draft": given["pack"], "n": 2, "missing": "T"}


def test_an_agent_without_prompt_is_sent_its_record_as_json_and_its_system_reads_it(tmp_path):
    spec = write_spec(
        tmp_path,
        """
plait 0.3
step first { model = m, prompt = "go", output { title: string } }
agent main_agent { with { title: first.title, again: first }, model = m, system = "About {{input.title}}" }
chain main = first -> main_agent
""",
        [{"output": {"title": "T"}}, {"text": "ok"}],
    )
    engine_result, seen = run_seeing(spec, "x")
    assert engine_result.output == "ok"
    assert json.loads(seen[1][1]) == {"title": "T", "again": {"title": "T"}}


def test_a_path_missing_at_run_time_fails_naming_the_binding(tmp_path):
    # Without an `input` block the run's input is unknown until it runs: here it is text, with no `topic`.
    spec = write_spec(
        tmp_path,
        """
step first { model = m, prompt = "go" }
step after { with { t: run.input.topic, f: first }, model = m, prompt = "{{input.t}} {{input.f}}" }
chain main = first -> after
""",
        [{"text": "one"}],
    )
    result = plait.run(str(spec), "x", raise_on_error=False)
    assert result.error.kind == "binding_missing"
    assert result.error.message == "`after`: `with` t: `run.input.topic`: `run.input` has no field `topic`"


def test_an_ask_reads_its_bindings_and_a_resumed_run_binds_once(tmp_path, capsys):
    spec = write_spec(
        tmp_path,
        """
plait 0.3
step draft { model = m, prompt = "draft", output { text: string } }
ask confirm "Send {{input.text}}?" { with { text: draft.text } }
step send { with { text: draft.text, ok: input }, model = m, prompt = "Send {{input.text}}: {{input.ok}}" }
chain main = draft -> confirm -> send
""",
        [{"output": {"text": "hello"}}, {"text": "sent"}],
    )
    code = main(["run", str(spec), "--input", "x", "--json"])
    stopped = json.loads(capsys.readouterr().out)
    assert code == 3 and stopped["pending"][0]["question"] == "Send hello?"
    code = main(["run", str(spec), "--resume", stopped["run_id"], "--answer", "confirm=yes", "--json"])
    done = json.loads(capsys.readouterr().out)
    assert code == 0 and done["output"] == "sent"
    assert [(d["name"], d["record"]) for d in done["decisions"] if d["kind"] == "with"] == [
        ("confirm", {"text": "hello"}),
        ("send", {"text": "hello", "ok": "yes"}),
    ]
    assert main(["trace", stopped["run_id"], "--dir", str(tmp_path)]) == 0
    lines = [
        line.split("  @")[0].split("with   ")[1] for line in capsys.readouterr().out.splitlines() if "with   " in line
    ]
    assert lines == ["confirm given: text = hello", "send given: text = hello, ok = yes"]


def test_a_code_step_in_a_loop_binds_the_iteration_and_the_last_output(tmp_path):
    spec = write_spec(
        tmp_path,
        """
plait 0.3
step draft { with { round: loop.iteration, last: loop.last, text: input }, run = python("steps:draft") }
loop polish = draft { max_iterations = 3 }
""",
        [],
        **{"steps.py": "def draft(round, last, text):\n    return f'{text}:{round}:{last or \"-\"}'\n"},
    )
    result = plait.run(str(spec), "x", raise_on_error=False)
    assert result.error is None and result.output == "x:3:x:2:x:1:-"
