"""ask: pauses the run like an approval and resumes with a typed answer; bad answers are refused with the reason."""

from __future__ import annotations

import pytest
from plait.core.kinds import StepNode
from plait.core.kinds import AskNode, ChainNode, RouteCase, RouteNode
from plait.core.types import TEXT, FieldType, LiteralType, ObjectType
from plait.runtime.errors import AgentError
from plait.runtime.outcomes import PendingAsk
from runtime_helpers import drain, go, make, program

ANSWER = ObjectType((FieldType("decision", LiteralType(("approve", "deny"))), FieldType("note", TEXT, optional=True)))
#: What a person answering is told: the `answer` block as JSON Schema, optional fields not required.
ANSWER_SCHEMA = {
    "type": "object",
    "properties": {"decision": {"type": "string", "enum": ["approve", "deny"]}, "note": {"type": "string"}},
    "required": ["decision"],
}


def approve_flow():
    return program(
        chains=[ChainNode(name="main", elements=("draft", "confirm", "decide"))],
        asks=[AskNode(name="confirm", question="Send this reply?\n{{input}}", output=ANSWER)],
        routes=[
            RouteNode(
                name="decide",
                subject=("input", "decision"),
                cases=(RouteCase("approve", "send"), RouteCase("deny", "drop")),
            )
        ],
        steps=[
            StepNode(name="draft", model="m", prompt="Draft for {{input}}"),
            StepNode(name="send", model="m", prompt="Send ({{input.note}})"),
            StepNode(name="drop", model="m", prompt="Drop"),
        ],
    )


def engine_for(flow=None):
    return make(
        models={"m": {"draft": [{"text": "Dear Ann"}], "send": [{"text": "sent"}], "drop": [{"text": "dropped"}]}},
        agents={},
        program=flow or approve_flow(),
    )


def test_an_ask_stops_the_run_listing_the_question_and_the_answers_schema():
    run = engine_for().start("ann")
    result = go(run)
    assert result.stop_reason == "interrupt"
    [pending] = result.pending
    assert (
        isinstance(pending, PendingAsk)
        and pending.id == "main/confirm"
        and pending.question == "Send this reply?\nDear Ann"
    )
    assert result.to_dict()["pending"] == [
        {
            "id": "main/confirm",
            "kind": "ask",
            "ask": "confirm",
            "question": "Send this reply?\nDear Ann",
            "answer_schema": ANSWER_SCHEMA,
            "branch": None,
            "path": ["main", "confirm"],
        }
    ]


def test_the_answer_resumes_the_run_and_a_route_switches_on_its_fields():
    engine = engine_for()
    run = engine.start("ann")
    go(run)
    result = go(run.resume(answers={"confirm": {"decision": "approve"}}))
    assert result.stop_reason == "done" and result.output == "sent"
    requests = engine.providers["m"].requests
    assert [r["agent"] for r in requests] == ["draft", "send"]  # the draft is not made again
    assert requests[-1]["messages"][0].text == "Send ()"  # the optional note left out reads as empty
    assert result.report.decisions[0] == {
        "kind": "ask",
        "name": "confirm",
        "path": ["main", "confirm"],
        "answer": {"decision": "approve", "note": None},
    }


def test_a_bad_answer_is_refused_with_the_reason_and_the_run_stays_waiting():
    run = engine_for().start("ann")
    go(run)
    with pytest.raises(AgentError) as refused:
        go(run.resume(answers={"confirm": {"decision": "maybe"}}))
    assert (
        refused.value.kind == "answer_invalid"
        and "$.decision" in refused.value.message
        and "'maybe' is not one of" in refused.value.message
    )
    with pytest.raises(AgentError) as unknown:
        go(run.resume(answers={"nope": "x"}))
    assert unknown.value.kind == "resume_invalid" and "`confirm` (main/confirm)" in unknown.value.message
    assert go(run.resume(answers={"main/confirm": {"decision": "deny"}})).output == "dropped"


def test_a_stored_run_resumes_with_the_answer():
    engine = engine_for()
    run = engine.start("ann")
    go(run)
    restored = engine.restore(run.snapshot())
    assert go(restored.resume(answers={"confirm": {"decision": "approve", "note": "ok"}})).output == "sent"


def test_a_free_text_ask_takes_text_only():
    flow = program(asks=[AskNode(name="main", question="Your name?")])
    run = engine_for(flow).start("")
    assert go(run).pending[0].schema is None
    with pytest.raises(AgentError):
        go(run.resume(answers={"main": {"name": "x"}}))
    assert go(run.resume(answers={"main": "Ann"})).output == "Ann"


def test_the_ask_event_carries_the_pending_item():
    events = go(drain(engine_for().start("ann")))
    [ask] = [e for e in events if e.type == "ask"]
    assert ask.data["pending"][0]["id"] == "main/confirm"
