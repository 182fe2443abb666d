"""loop: the body runs until `until` holds on its output or max_iterations; loop.* templates; exhaustion; records."""

from __future__ import annotations

import dataclasses

import pytest
from plait.runtime.conditions import (
    BoolOp,
    Compare,
    ConditionError,
    Field,
    Not,
    condition_text,
    holds,
)
from plait.core.kinds import StepNode
from plait.core.kinds import ChainNode, LoopNode
from plait.core.types import TEXT
from runtime_helpers import drain, go, make, program, record

ACCEPT = Compare(("verdict",), "==", "accept")
REVIEW = record(verdict=["accept", "revise"], feedback="string")


def polish(until=ACCEPT, max_iterations=3, on_exhausted="fail", body=("draft", "review")):
    return program(
        loops=[LoopNode(name="main", body=body, max_iterations=max_iterations, until=until, on_exhausted=on_exhausted)],
        steps=[
            StepNode(
                name="draft",
                model="m",
                prompt="Topic: {{input}} | try {{loop.iteration}} | last: {{loop.last.feedback}} | history: {{loop.history}}",
            ),
            StepNode(name="review", model="m", prompt="Grade: {{input}}", output=REVIEW),
        ],
    )


def verdicts(*grades):
    return {
        "draft": [{"text": f"draft {i + 1}"} for i in range(len(grades))],
        "review": [{"output": {"verdict": g, "feedback": f"fb{i + 1}"}} for i, g in enumerate(grades)],
    }


def test_the_body_repeats_until_the_condition_holds_and_sees_loop_values():
    engine = make(models={"m": verdicts("revise", "accept")}, agents={}, program=polish())
    result = go(engine.run("otters"))
    assert result.stop_reason == "done" and result.output == {"verdict": "accept", "feedback": "fb2"}
    drafts = [r["messages"][0].text for r in engine.providers["m"].requests if r["agent"] == "draft"]
    assert drafts[0] == "Topic: otters | try 1 | last:  | history: []"  # loop.last is empty on the first iteration
    assert drafts[1] == 'Topic: otters | try 2 | last: fb1 | history: [{"verdict": "revise", "feedback": "fb1"}]'
    loops = [d for d in result.report.decisions if d["kind"] == "loop"]
    assert [(d["iteration"], d["holds"], d["condition"]) for d in loops] == [
        (1, False, 'verdict == "accept"'),
        (2, True, 'verdict == "accept"'),
    ]


def test_exhausted_fails_the_run_with_a_clear_reason():
    engine = make(models={"m": verdicts("revise", "revise")}, agents={}, program=polish(max_iterations=2))
    result = go(engine.run("x"))
    assert result.stop_reason == "error" and result.error.kind == "loop_exhausted"
    assert (
        result.error.message
        == 'loop `main` ran 2 iteration(s) and `verdict == "accept"` never held (on_exhausted = fail)'
    )


def test_exhausted_with_last_goes_on_with_the_last_output_and_warns():
    p = polish(max_iterations=2, on_exhausted="last")
    p.loops["polish"] = dataclasses.replace(p.loops.pop("main"), name="polish")
    p.chains["main"] = ChainNode(name="main", elements=("polish", "publish"))
    p.steps["publish"] = StepNode(name="publish", model="m", prompt="Publish: {{input.feedback}}")
    replies = verdicts("revise", "revise")
    replies["publish"] = [{"text": "published"}]
    engine = make(models={"m": replies}, agents={}, program=p)
    result = go(engine.run("x"))
    assert result.stop_reason == "done" and result.output == "published"
    assert engine.providers["m"].requests[-1]["messages"][0].text == "Publish: fb2"
    assert [w["code"] for w in result.report.warnings] == ["loop_exhausted"]


def test_a_condition_may_name_a_runnable_inside_the_body():
    p = polish(until=Compare(("review", "verdict"), "==", "accept"), body=("review", "summarize"))
    p.steps["summarize"] = StepNode(name="summarize", model="m", prompt="Summarize {{input}}")
    replies = {
        "review": [
            {"output": {"verdict": "revise", "feedback": "a"}},
            {"output": {"verdict": "accept", "feedback": "b"}},
        ],
        "summarize": [{"text": "s1"}, {"text": "s2"}],
    }
    engine = make(models={"m": replies}, agents={}, program=p)
    result = go(engine.run("x"))
    assert result.output == "s2" and [d["holds"] for d in result.report.decisions] == [False, True]


def test_without_until_the_body_runs_max_iterations_times():
    p = program(
        loops=[LoopNode(name="main", body=("count",), max_iterations=3, until=None)],
        steps=[StepNode(name="count", model="m", prompt="{{loop.iteration}}")],
    )
    engine = make(models={"m": {"count": [{"text": "a"}, {"text": "b"}, {"text": "c"}]}}, agents={}, program=p)
    result = go(engine.run("x"))
    assert result.output == "c" and result.report.warnings == []
    assert [r["messages"][0].text for r in engine.providers["m"].requests] == ["1", "2", "3"]


def test_each_iteration_is_an_event_with_the_conditions_value():
    engine = make(models={"m": verdicts("revise", "accept")}, agents={}, program=polish())
    events = go(drain(engine.start("x")))
    iterations = [e.data for e in events if e.type == "loop_iteration"]
    assert [(d["iteration"], d["holds"]) for d in iterations] == [(1, False), (2, True)]


def test_a_condition_reading_a_missing_field_fails_the_run_naming_it():
    p = polish()
    p.steps["review"] = dataclasses.replace(p.steps["review"], output=TEXT)  # text: a JSON object without `verdict`
    engine = make(
        models={"m": {"draft": [{"text": "d"}], "review": [{"text": '{"grade": "A"}'}]}}, agents={}, program=p
    )
    result = go(engine.run("x"))
    assert (
        result.error.kind == "loop_condition_invalid"
        and "`verdict`" in result.error.message
        and "iteration 1" in result.error.message
    )


@pytest.mark.parametrize(
    "cond, expected",
    [
        (Compare(("n",), "<", 3), True),
        (Compare(("n",), ">=", 3), False),
        (Compare(("n",), "!=", 2), False),
        (Field(("ok",)), True),
        (Not(Field(("ok",))), False),
        (BoolOp("and", (Field(("ok",)), Compare(("n",), "<=", 2))), True),
        (BoolOp("or", (Not(Field(("ok",))), Compare(("tag",), "==", "x"))), False),
        (BoolOp("and", (BoolOp("or", (Field(("ok",)), Compare(("n",), ">", 9))), Compare(("tag",), "==", "y"))), True),
    ],
)
def test_conditions_evaluate_on_the_output(cond, expected):
    assert holds(cond, {"n": 2, "ok": True, "tag": "y"}, {}) is expected


def test_comparisons_of_the_wrong_types_are_refused_not_guessed():
    with pytest.raises(ConditionError):
        holds(Compare(("n",), "<", 3), {"n": "2"}, {})
    with pytest.raises(ConditionError):
        holds(Field(("n",)), {"n": 1}, {})
    assert holds(Compare(("ok",), "==", 1), {"ok": True}, {}) is False  # a bool is not 1


def test_condition_text_parenthesises_only_where_needed():
    cond = BoolOp("and", (BoolOp("or", (Field(("a",)), Field(("b",)))), Not(Compare(("n",), "<", 3))))
    assert condition_text(cond) == "(a or b) and not n < 3"
