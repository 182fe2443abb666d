"""A run's events (`RunService.events`) → AG-UI 1.0 events, as Server-Sent Events through the SDK's encoder.

`GET /runs/{id}/events?format=ag-ui` (the HTTP app hands it here). The
mapping: run_start → RUN_STARTED (thread and run id: the run id); agent and
model steps → STEP_STARTED / STEP_FINISHED; streamed text → TEXT_MESSAGE_START,
_CONTENT, _END (a run that streamed none ends with its text output as one
assistant message); a tool call → TOOL_CALL_START, _ARGS, _END, and its result
→ TOOL_CALL_RESULT; run_end → RUN_FINISHED (the output as `result`; an
interrupt outcome naming each pending ask or approval; a cancelled outcome)
or RUN_ERROR. Every other run event (route, loop, warning, ask, decision...)
is a CUSTOM event named `plait.<type>`. Each SSE frame carries the run
event's seq as its `id`, so `Last-Event-ID` resumes as on the plain stream.
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
    """One run's event → its AG-UI events; remembers the open text message and tool calls."""

    run_id: str
    #: The text message a step is streaming, by the step's name.
    open_text: dict[str, str] = field(default_factory=dict)
    #: Tool calls started and not yet ended (TOOL_CALL_END comes before the result).
    open_calls: set[str] = field(default_factory=set)
    streamed_text: bool = False

    def map(self, event: RunEvent) -> list[BaseEvent]:
        data, kind = event.data, event.type
        where = "/".join(event.path)
        if kind == "run_start":
            return [RunStartedEvent(thread_id=self.run_id, run_id=self.run_id)]
        if kind in ("agent_start", "agent_end"):
            cls = StepStartedEvent if kind == "agent_start" else StepFinishedEvent
            return [cls(step_name=where)]
        if kind == "step_start":
            return [StepStartedEvent(step_name=f"{where}#{data.get('step', 1)}")]
        if kind == "step_end":
            name = f"{where}#{data.get('step', 1)}"
            out: list[BaseEvent] = self._close_calls()
            message = self.open_text.pop(name, None)
            if message is not None:
                out.append(TextMessageEndEvent(message_id=message))
            return [*out, StepFinishedEvent(step_name=name)]
        if kind == "text":
            return self._text(f"{where}#{data.get('step', 1)}", event.seq, str(data.get("text") or ""))
        if kind == "tool_call_start":
            call = str(data.get("call_id"))
            self.open_calls.add(call)
            out = [ToolCallStartEvent(tool_call_id=call, tool_call_name=str(data.get("name")))]
            arguments = data.get("arguments")
            if arguments:
                delta = arguments if isinstance(arguments, str) else json.dumps(arguments)
                out.append(ToolCallArgsEvent(tool_call_id=call, delta=delta))
            return out
        if kind == "tool_call_delta":
            arguments = data.get("arguments")
            delta = arguments if isinstance(arguments, str) else json.dumps(arguments)
            return [ToolCallArgsEvent(tool_call_id=str(data.get("call_id")), delta=delta)] if delta else []
        if kind == "tool_call_end":
            call = str(data.get("call_id"))
            out = self._close_calls({call})
            content = str(data.get("content") or "")
            return [*out, ToolCallResultEvent(message_id=f"{call}-result", tool_call_id=call, content=content)]
        if kind == "run_end":
            return []  # the run's view decides how it ended: `finish`
        return [CustomEvent(name=f"plait.{kind}", value={"seq": event.seq, "path": event.path, "data": data})]

    def _text(self, name: str, seq: int, text: str) -> list[BaseEvent]:
        if not text:
            return []
        self.streamed_text = True
        out: list[BaseEvent] = []
        message = self.open_text.get(name)
        if message is None:
            message = self.open_text[name] = f"{self.run_id}-{seq}"
            out.append(TextMessageStartEvent(message_id=message, role="assistant"))
        out.append(TextMessageContentEvent(message_id=message, delta=text))
        return out

    def _close_calls(self, only: set[str] | None = None) -> list[BaseEvent]:
        closing = sorted(self.open_calls if only is None else self.open_calls & only)
        self.open_calls.difference_update(closing)
        return [ToolCallEndEvent(tool_call_id=c) for c in closing]

    def finish(self, view: RunView) -> list[BaseEvent]:
        """The run stopped: close what is open, then RUN_FINISHED or RUN_ERROR from how it ended."""
        out = self._close_calls()
        out.extend(TextMessageEndEvent(message_id=m) for m in self.open_text.values())
        self.open_text.clear()
        if view.status == "done" and isinstance(view.output, str) and view.output and not self.streamed_text:
            message = f"{self.run_id}-output"
            out += [
                TextMessageStartEvent(message_id=message, role="assistant"),
                TextMessageContentEvent(message_id=message, delta=view.output),
                TextMessageEndEvent(message_id=message),
            ]
        if view.status in ("error", "max_steps"):
            code = "max_steps" if view.status == "max_steps" else None
            out.append(RunErrorEvent(message=view.error or view.stop_reason or view.status, code=code))
        elif view.status == "waiting":
            interrupts = [_interrupt(p) for p in view.pending]
            outcome = RunFinishedInterruptOutcome(interrupts=interrupts) if interrupts else None
            out.append(RunFinishedEvent(thread_id=self.run_id, run_id=self.run_id, outcome=outcome))
        elif view.status == "cancelled":
            out.append(
                RunFinishedEvent(thread_id=self.run_id, run_id=self.run_id, outcome=RunFinishedCancelledOutcome())
            )
        else:
            out.append(RunFinishedEvent(thread_id=self.run_id, run_id=self.run_id, result=view.output))
        return out


def _interrupt(item: dict[str, Any]) -> Interrupt:
    kind = str(item.get("kind"))
    if kind == "ask":
        return Interrupt(
            id=str(item["id"]), reason="ask", message=item.get("question"), response_schema=item.get("answer_schema")
        )
    return Interrupt(
        id=str(item["id"]),
        reason=kind,
        message=f"{kind} of `{item.get('name')}`",
        tool_call_id=str(item["id"]) if kind == "approval" else None,
    )


async def stream(service: RunService, run_id: str, after: int | None = None) -> AsyncIterator[str]:
    """The SSE frames: each AG-UI event as the SDK encodes it, behind its run event's `id:`."""
    encoder = EventEncoder()
    mapper = Mapper(run_id)
    last = after
    async for event in service.events(run_id, after):
        last = event.seq
        for mapped in mapper.map(event):
            yield f"id: {event.seq}\n" + encoder.encode(mapped)
    view = await service.get(run_id)
    if view.status != "running":
        for mapped in mapper.finish(view):
            yield (f"id: {last}\n" if last is not None else "") + encoder.encode(mapped)


def response(service: RunService, run_id: str, after: int | None = None) -> StreamingResponse:
    """What the events route returns for `?format=ag-ui` (the caller has checked that the run exists)."""
    return StreamingResponse(
        stream(service, run_id, after),
        media_type=EventEncoder().get_content_type(),
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
