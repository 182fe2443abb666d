"""Leaving a loop from the middle of its body (plait 0.3): a route case that goes to `break` ends the loop with what
the route received, records "break" as the loop's exit, leaves an outer loop when it names one, and a run cut off
just after the decision resumes past the loop without deciding or calling again."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from spec_helpers import run_seeing, write_spec

from plait.cli import main
from plait.runtime.engine import Engine

SPEC = """
plait 0.3
step draft {
  model  = m
  prompt = "draft {{loop.iteration}}: {{input}}"
}
step review {
  model  = m
  prompt = "review {{input}}"
  output { verdict: "accept" | "revise", feedback: string }
}
step note {
  model  = m
  prompt = "note {{input.feedback}}"
}
route gate on input.verdict {
  "accept" -> break
  "revise" -> note
}
loop polish = draft -> review -> gate { max_iterations = 3 }
step finish {
  model  = m
  prompt = "finish {{input}}"
}
chain main = polish -> finish
"""

REPLIES = [
    {"text": "d1"},
    {"output": {"verdict": "revise", "feedback": "shorter"}},
    {"text": "n1"},
    {"text": "d2"},
    {"output": {"verdict": "accept", "feedback": "good"}},
    {"text": "done"},
]


def loop_decisions(result: Any) -> list[dict[str, Any]]:
    return [d for d in result.report.decisions if d["kind"] == "loop"]


def test_a_break_case_ends_the_loop_with_what_the_route_received(tmp_path):
    result, seen = run_seeing(write_spec(tmp_path, SPEC, REPLIES), "a kettle")
    assert result.error is None and result.output == "done"
    # The note step never ran in the second iteration and no third iteration started.
    assert [text for _, text in seen] == [
        "draft 1: a kettle",
        "review d1",
        "note shorter",
        "draft 2: a kettle",
        "review d2",
        'finish {"verdict": "accept", "feedback": "good"}',
    ]
    loops = loop_decisions(result)
    assert [(d["iteration"], d.get("exit")) for d in loops] == [(1, None), (2, "break")]
    routes = [d for d in result.report.decisions if d["kind"] == "route"]
    assert [(d["case"], d["target"], d.get("leaves")) for d in routes] == [
        ("revise", "note", None),
        ("accept", None, "polish"),
    ]


NESTED = """
plait 0.3
step work {
  model  = m
  prompt = "work {{outer.iteration}}.{{loop.iteration}}"
  output { state: "more" | "next" | "stop" }
}
step rest { model = m, prompt = "rest" }
route judge on input.state {
  "more" -> rest
  "next" -> break
  "stop" -> break outer
}
loop inner = work -> judge { max_iterations = 3 }
step tally { model = m, prompt = "tally {{input}}" }
loop outer = inner -> tally { max_iterations = 3 }
chain main = outer
"""


def test_a_bare_break_leaves_the_inner_loop_and_a_named_one_the_outer(tmp_path):
    replies = [
        {"output": {"state": "more"}},
        {"text": "r"},
        {"output": {"state": "next"}},  # leaves inner: the outer loop goes on to tally
        {"text": "t1"},
        {"output": {"state": "stop"}},  # leaves outer from inside inner: tally does not run
    ]
    result, seen = run_seeing(write_spec(tmp_path, NESTED, replies), "x")
    assert result.error is None
    assert result.output == {"state": "stop"}
    assert [text for _, text in seen] == ["work 1.1", "rest", "work 1.2", 'tally {"state": "next"}', "work 2.1"]
    exits = [(d["name"], d["iteration"], d.get("exit"), d.get("leaves")) for d in loop_decisions(result)]
    assert exits == [
        ("inner", 1, None, None),
        ("inner", 2, "break", None),
        ("outer", 1, None, None),
        ("inner", 1, "break", "outer"),
        ("outer", 2, "break", None),
    ]


def sent(engine: Engine, model: str = "m") -> list[str | None]:
    """Who sends each request the engine's runs make to `model`."""
    seen: list[str | None] = []
    provider = engine._make_provider(model)
    for_run = provider.for_run

    def view(**options: Any) -> Any:
        made = for_run(**options)
        original = made.complete

        async def spy(request: Any) -> Any:
            seen.append(request.agent)
            return await original(request)

        made.complete = spy
        return made

    provider.for_run = view
    return seen


def _replies(tmp_path: Path, hold: bool) -> None:
    replies = json.loads(json.dumps(REPLIES))
    if hold:
        replies[-1]["delay"] = "1h"  # the step after the loop: the run is cut off there
    (tmp_path / "replies.json").write_text(json.dumps(replies))


def test_a_run_cut_off_just_after_a_break_resumes_past_the_loop(tmp_path):
    spec = write_spec(tmp_path, SPEC, REPLIES)
    _replies(tmp_path, hold=True)
    first = Engine.from_spec(spec)
    broke: list[asyncio.Event] = []

    def on_route(event: Any) -> None:
        if event.data.get("leaves"):
            broke[0].set()

    first.observe("route", on_route)
    run = first.start("a kettle")

    async def cut_off() -> None:
        """Cancel the run as soon as the break is decided: like a kill just after the decision."""
        broke.append(asyncio.Event())
        task = asyncio.ensure_future(run._wait())
        await broke[0].wait()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    asyncio.run(cut_off())
    run_id = run.id
    first.store.close()

    _replies(tmp_path, hold=False)
    again = Engine.from_spec(spec)
    calls = sent(again)
    resumed = again.restore(run_id)
    result = asyncio.run(resumed.resume())
    assert result.error is None and (result.stop_reason, result.output) == ("done", "done")
    # Nothing inside the loop ran again: only the step after it.
    assert calls == ["finish"]
    # The break was decided once, and the loop's exit is recorded once.
    rows = [e["data"] for e in again.store.events(run_id) if e["kind"] == "decision"]
    assert [(d["name"], d.get("exit"), d.get("leaves")) for d in rows if d["kind"] in ("route", "loop")] == [
        ("gate", None, None),
        ("polish", None, None),
        ("gate", None, "polish"),
        ("polish", "break", None),
    ]


def test_coverage_counts_break_as_a_loop_exit_and_its_case(tmp_path, capsys):
    spec = write_spec(tmp_path, SPEC, REPLIES)
    assert main(["run", str(spec), "--input", "a kettle"]) == 0
    capsys.readouterr()
    main(["coverage", str(spec), "--json"])
    report = json.loads(capsys.readouterr().out)
    items = {item["id"]: item["runs"] for entry in report["entries"] for item in entry["items"]}
    # Three ways out of this loop: it has no `until`, so no `met`; a run left it by the route's break case.
    assert {k: v for k, v in items.items() if k.startswith("loop:")} == {
        "loop:polish:exhausted": 0,
        "loop:polish:break": 1,
    }
    assert items['case:gate="accept"'] == 1 and items['case:gate="revise"'] == 1


def test_a_spec_test_reads_break_as_the_loop_exit(tmp_path, capsys):
    spec = write_spec(
        tmp_path,
        SPEC
        + """
test accepted {
  input   = "a kettle"
  replies = {
    draft  = [{ text = "d1" }, { text = "d2" }]
    review = [{ output = { verdict = "revise", feedback = "shorter" } }, { output = { verdict = "accept", feedback = "good" } }]
    note   = [{ text = "n1" }]
    finish = [{ text = "done" }]
  }
  expect exit(polish) == "break"
  expect iterations(polish) == 2
  expect case(gate) == "accept"
}
""",
        REPLIES,
    )
    assert main(["test", str(spec)]) == 0, capsys.readouterr().out


def test_trace_says_which_case_broke_out_and_which_loops_it_ended(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    replies = [
        {"output": {"state": "next"}},
        {"text": "t1"},
        {"output": {"state": "stop"}},
    ]
    spec = write_spec(tmp_path, NESTED, replies)
    assert main(["run", str(spec), "--input", "x", "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    assert main(["trace", run_id]) == 0
    # Each line: its offset, what happened, `@ PATH`.
    lines = [line.strip().split("s  ", 1)[-1].split("  @ ")[0] for line in capsys.readouterr().out.splitlines()]
    assert [line for line in lines if line.startswith(("route", "loop"))] == [
        "route  judge: input.state = next → case next → break inner",
        "loop   inner iteration 1: left by break",
        "loop   outer iteration 1",
        "route  judge: input.state = stop → case stop → break outer",
        "loop   inner iteration 1: left by break on its way out of outer",
        "loop   outer iteration 2: left by break",
    ]


DEEP = """
plait 0.3
step work {
  model  = m
  prompt = "work {{loop.iteration}}"
  output { state: "go" | "check" , sure: bool }
}
step rest { model = m, prompt = "rest" }
route sure on input.sure {
  true  -> break
  false -> rest
}
route judge on input.state {
  "go"    -> rest
  "check" -> sure
}
chain round = work -> judge
loop keep = round { max_iterations = 4 }
"""


def test_a_break_reached_through_a_named_chain_and_a_route_case_still_ends_its_loop(tmp_path):
    replies = [
        {"output": {"state": "go", "sure": False}},
        {"text": "r1"},
        {"output": {"state": "check", "sure": False}},
        {"text": "r2"},
        {"output": {"state": "check", "sure": True}},
    ]
    result, seen = run_seeing(write_spec(tmp_path, DEEP, replies), "x")
    assert result.error is None and result.output == {"state": "check", "sure": True}
    assert [text for _, text in seen] == ["work 1", "rest", "work 2", "rest", "work 3"]
    assert [(d["iteration"], d.get("exit")) for d in loop_decisions(result)] == [(1, None), (2, None), (3, "break")]
