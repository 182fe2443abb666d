"""A run's events (`RunService.events`) → AG-UI 1.0 events, as Server-Sent Events through the SDK's encoder.

`GET /runs/{id}/events?format=ag-ui` (the HTTP app hands it here). The AG-UI
thread is the plait run; each stretch of it between a start (or a resume) and
a stop is an AG-UI run. The mapping: run_start and run_resume → RUN_STARTED
(a resume's run id is `<run id>-<seq>`, its parent the stretch before); a
model call (step_start … step_end) → STEP_STARTED, the reply's text as
TEXT_MESSAGE_START / _CONTENT / _END, STEP_FINISHED; a tool call →
TOOL_CALL_START, _ARGS, _END, and its result → TOOL_CALL_RESULT; a code step →
STEP_STARTED / STEP_FINISHED; run_end → RUN_FINISHED (the output as `result`;
an interrupt outcome naming each pending ask, approval or unknown outcome; a
cancelled outcome) or RUN_ERROR (an error, max_steps). Every other run event
(decision, warning, state...) is a CUSTOM event named `plait.<type>`.

The stream ends with the stop the run stands at now, as an AG-UI client
expects a run's stream to end: a run waiting for a person ends its stream
with RUN_FINISHED and an interrupt outcome; after the decision, the client
reads on with `Last-Event-ID` (each frame's `id` is its run event's seq, as on
the plain stream) and gets the next stretch.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    Interrupt,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunStartedEvent,
    StepFinishedEvent,
    StepStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from ag_ui.encoder import EventEncoder
from starlette.responses import StreamingResponse

if TYPE_CHECKING:
    from plait.serve.service import RunEvent, RunService, RunView

__all__ = ["Mapper", "response", "stream"]


@dataclass
class Mapper:
    """One run's events → AG-UI events; remembers the stretch it is in and the steps that are open."""

    thread: str
    #: The AG-UI run (stretch) the events belong to now.
    current: str = ""
    #: Open steps: the path they started at → the step's name (step_end names no step number).
    steps: dict[str, str] = field(default_factory=dict)

    def map(self, event: RunEvent) -> list[BaseEvent]:
        """Every event but run_end (whose meaning depends on the run's state now: `stopped`)."""
        data, kind = event.data, event.type
        where = "/".join(event.path)
        if kind in ("run_start", "run_resume"):
            parent = self.current or None
            self.current = self.thread if kind == "run_start" else f"{self.thread}-{event.seq}"
            return [RunStartedEvent(thread_id=self.thread, run_id=self.current, parent_run_id=parent)]
        if kind == "step_start":
            name = self.steps[where] = f"{where}#{data.get('step', 1)}"
            return [StepStartedEvent(step_name=name)]
        if kind == "step_end":
            name = self.steps.pop(where, where)
            out: list[BaseEvent] = []
            text = data.get("text")
            if isinstance(text, str) and text:
                message = f"{self.thread}-{event.seq}"
                out += [
                    TextMessageStartEvent(message_id=message, role="assistant"),
                    TextMessageContentEvent(message_id=message, delta=text),
                    TextMessageEndEvent(message_id=message),
                ]
            return [*out, StepFinishedEvent(step_name=name)]
        if kind == "tool_call_start":
            if not data.get("call_id"):  # a code step's run, journaled as an effect
                return [StepStartedEvent(step_name=where)]
            call = str(data["call_id"])
            arguments = data.get("arguments")
            return [
                ToolCallStartEvent(tool_call_id=call, tool_call_name=str(data.get("tool"))),
                ToolCallArgsEvent(tool_call_id=call, delta=json.dumps(arguments if arguments is not None else {})),
                ToolCallEndEvent(tool_call_id=call),
            ]
        if kind == "tool_result":
            if not data.get("call_id"):
                return [StepFinishedEvent(step_name=where)]
            call = str(data["call_id"])
            content = data.get("content")
            text = content if isinstance(content, str) else json.dumps(content)
            return [ToolCallResultEvent(message_id=f"{call}-result", tool_call_id=call, content=text, role="tool")]
        return [CustomEvent(name=f"plait.{kind}", value={"seq": event.seq, "path": event.path, "data": data})]

    def passed(self, event: RunEvent) -> list[BaseEvent]:
        """A run_end the run has moved on from (a decision resumed it): the stretch's end, from the event."""
        data = event.data
        reason = data.get("stop_reason")
        if reason in ("interrupt", "pause"):
            return [self._finished(outcome=_interrupts([_shaped(p) for p in data.get("pending") or []]))]
        if reason in ("error", "max_steps"):
            error = data.get("error")
            message = error.get("message") if isinstance(error, dict) else error
            return [RunErrorEvent(message=str(message or reason), code=reason)]
        return [self._finished()]

    def stopped(self, view: RunView) -> list[BaseEvent]:
        """The stop the run stands at now: RUN_FINISHED or RUN_ERROR from its view."""
        if view.status in ("error", "max_steps"):
            return [RunErrorEvent(message=view.error or view.stop_reason or view.status, code=view.status)]
        if view.status == "waiting":
            return [self._finished(outcome=_interrupts(view.pending))]
        if view.status == "cancelled":
            return [self._finished(outcome=RunFinishedCancelledOutcome())]
        return [self._finished(result=view.output)]

    def _finished(self, **fields: Any) -> RunFinishedEvent:
        return RunFinishedEvent(thread_id=self.thread, run_id=self.current or self.thread, **fields)


def _shaped(item: dict[str, Any]) -> dict[str, Any]:
    """A pending item as the journal stores it → the RunView shape (`name` for the ask or the tool)."""
    return {**item, "name": item.get("ask") or item.get("tool") or item.get("name")}


def _interrupts(pending: list[dict[str, Any]]) -> RunFinishedInterruptOutcome | None:
    found = [_interrupt(p) for p in pending]
    return RunFinishedInterruptOutcome(interrupts=found) if found else None


def _interrupt(item: dict[str, Any]) -> Interrupt:
    kind = str(item.get("kind") or "approval")
    if kind == "ask":
        return Interrupt(
            id=str(item["id"]), reason="ask", message=item.get("question"), response_schema=item.get("answer_schema")
        )
    if kind == "budget":
        return Interrupt(
            id=str(item["id"]),
            reason="budget",
            message=f"the budget of `{item.get('name')}` is spent ({item.get('limit')}): raise it to go on",
            response_schema=item.get("answer_schema"),
        )
    arguments = json.dumps(item.get("arguments"))
    what = "approval of" if kind == "approval" else "the unknown outcome of"
    return Interrupt(id=str(item["id"]), reason=kind, message=f"{what} `{item.get('name')}` with {arguments}")


async def stream(service: RunService, run_id: str, after: int | None = None) -> AsyncIterator[str]:
    """The SSE frames: each AG-UI event as the SDK encodes it, behind its run event's `id:`."""
    encoder = EventEncoder()
    mapper = Mapper(run_id, current=run_id if after else "")
    async for event in service.events(run_id, after):
        if event.type != "run_end":
            mapped = mapper.map(event)
        else:
            view = await service.get(run_id)
            if view.status != "running":
                for item in mapper.stopped(view):
                    yield f"id: {event.seq}\n" + encoder.encode(item)
                return
            mapped = mapper.passed(event)
        for item in mapped:
            yield f"id: {event.seq}\n" + encoder.encode(item)


def response(service: RunService, run_id: str, after: int | None = None) -> StreamingResponse:
    """What the events route returns for `?format=ag-ui` (the caller has checked that the run exists)."""
    return StreamingResponse(
        stream(service, run_id, after),
        media_type=EventEncoder().get_content_type(),
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
