"""`GET /runs/{id}/events?format=ag-ui`: a run's events as AG-UI 1.0 events, read back through the SDK's types."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("ag_ui")
pytest.importorskip("uvicorn")

import httpx  # noqa: E402
from ag_ui.core import Event, EventType  # noqa: E402
from protocol_server import TOKEN, serving, write_specs  # noqa: E402
from pydantic import TypeAdapter  # noqa: E402

pytestmark = pytest.mark.slow

AUTH = {"Authorization": f"Bearer {TOKEN}"}
EVENTS = TypeAdapter(Event)


def read(base: str, run_id: str, last_id: str | None = None) -> list[tuple[str, object]]:
    """Every frame of one AG-UI stream until the server ends it: (its id, the parsed event)."""
    headers = dict(AUTH, **({"Last-Event-ID": last_id} if last_id else {}))
    out = []
    with httpx.stream("GET", f"{base}/runs/{run_id}/events?format=ag-ui", headers=headers, timeout=60) as response:
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
        frame_id = None
        for line in response.iter_lines():
            if line.startswith("id: "):
                frame_id = line[4:]
            elif line.startswith("data: "):
                out.append((frame_id, EVENTS.validate_python(json.loads(line[6:]))))
    return out


def types(frames) -> list[str]:
    return [e.type.value for _, e in frames]


def balanced(frames) -> None:
    """Each step and tool call opened is closed, in order; each text message is whole."""
    steps: list[str] = []
    for _, e in frames:
        if e.type == EventType.STEP_STARTED:
            steps.append(e.step_name)
        elif e.type == EventType.STEP_FINISHED:
            assert steps.pop() == e.step_name
    assert steps == []


def test_a_run_that_waits_for_an_approval_then_finishes_reads_as_two_ag_ui_runs(tmp_path):
    specs = write_specs(tmp_path, "desk")
    with serving(specs) as base:
        run_id = httpx.post(f"{base}/runs", json={"spec": "desk", "input": "add 2 and 3"}, headers=AUTH).json()["id"]
        first = read(base, run_id)
        approval = first[-1][1].outcome.interrupts[0]
        httpx.post(
            f"{base}/runs/{run_id}/decisions",
            json={"decisions": [{"id": approval.id, "action": "approve"}]},
            headers=AUTH,
        ).raise_for_status()
        second = read(base, run_id, last_id=first[-1][0])

    assert types(first) == [
        "RUN_STARTED",
        "STEP_STARTED",
        "STEP_FINISHED",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "STEP_STARTED",
        "STEP_FINISHED",
        "RUN_FINISHED",
    ]
    started, finished = first[0][1], first[-1][1]
    assert started.thread_id == started.run_id == run_id
    call = first[3][1]
    assert call.tool_call_name == "add" and json.loads(first[4][1].delta) == {"a": 2, "b": 3}
    assert first[6][1].tool_call_id == call.tool_call_id and first[6][1].content == "5"
    assert finished.run_id == run_id and finished.outcome.type == "interrupt"
    assert approval.reason == "approval" and "`send`" in approval.message
    balanced(first)

    # Resumed after the last id read: nothing seen twice, and the resume is a new AG-UI run of the same thread.
    assert min(int(i) for i, _ in second) > int(first[-1][0])
    resumed = second[0][1]
    assert resumed.type == EventType.RUN_STARTED and resumed.thread_id == run_id
    assert resumed.run_id != run_id and resumed.parent_run_id == run_id
    assert "TOOL_CALL_RESULT" in types(second) and "plait.decision" in [
        e.name for _, e in second if e.type == EventType.CUSTOM
    ]
    text = [e.delta for _, e in second if e.type == EventType.TEXT_MESSAGE_CONTENT]
    assert text == ["The sum is 5."]
    end = second[-1][1]
    assert end.type == EventType.RUN_FINISHED and end.run_id == resumed.run_id and end.result == "The sum is 5."
    balanced(second)


def test_a_cancelled_run_finishes_with_the_cancelled_outcome_and_a_typed_output_is_the_result(tmp_path):
    specs = write_specs(tmp_path, "triage", "grade")
    with serving(specs) as base:
        ticket = {"ticket": "broken", "customer": "Ann"}
        waiting = httpx.post(f"{base}/runs?wait=30s", json={"spec": "triage", "input": ticket}, headers=AUTH).json()
        httpx.post(f"{base}/runs/{waiting['id']}/cancel", headers=AUTH).raise_for_status()
        cancelled = read(base, waiting["id"])
        graded = httpx.post(f"{base}/runs?wait=30s", json={"spec": "grade", "input": "42"}, headers=AUTH).json()
        typed = read(base, graded["id"])
        unknown = httpx.get(f"{base}/runs/nope/events?format=ag-ui", headers=AUTH)
    assert waiting["status"] == "waiting"
    assert cancelled[-1][1].type == EventType.RUN_FINISHED and cancelled[-1][1].outcome.type == "cancelled"
    assert typed[-1][1].result == {"verdict": "accept", "score": 9}
    assert unknown.status_code == 404
