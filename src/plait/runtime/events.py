"""Lifecycle moments of a run → typed events for the CLI, the store, observers and telemetry.

Event types: `run_start`, `run_end`, `agent_start`, `agent_end`, `step_start`,
`step_end`, `text`, `tool_call_delta`, `tool_call_start`, `tool_call_end`,
`warning`, `interrupt`, `pause`, `consolidate_round`, and from 0.2 `route`
(the case taken and the subject's value), `loop_iteration` (its number and
the condition's value), `map_item` (its index and result), `ask` (the pending
question) and `ask_answered`, and `budget_exceeded` (a model call a budget
refused: the budget's runnable, limits, what was spent and needed, and whether
the run pauses or fails). Every event carries the
graph `path` of the run that produced it (nested agents and branches included)
and the agent's telemetry names (`label`, `source`, `attributes`).
Events are only built when someone listens: the hot loop checks `bus.active`.

Observers are fire-and-forget reactors: whatever one does (raise, fail, hang up
its own run) never changes the run it watches. A failure is never silent
either: it becomes a warning, `observer_failed` for a function (sync or async)
and `observer_agent_failed` for an observer agent, in the report and as a
`warning` event.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from .outcomes import Done, Fail
from .secret_values import known, mask_data

__all__ = ["OBSERVER_AGENT_FAILED", "OBSERVER_FAILED", "Event", "EventBus", "Observer", "span_name"]

OBSERVER_FAILED = "observer_failed"
OBSERVER_AGENT_FAILED = "observer_agent_failed"


@dataclass(slots=True)
class Event:
    type: str
    path: tuple[str, ...]
    data: dict[str, Any] = field(default_factory=dict)
    agent: str | None = None
    label: str | None = None
    source: str | None = None
    attributes: dict[str, Any] | None = None

    @property
    def span(self) -> str | None:
        """The telemetry span this event belongs to (`invoke_agent briefing`)."""
        return span_name(self.agent, self.label)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "path": list(self.path)}
        if self.agent is not None:
            out["agent"] = self.agent
            out["span"] = self.span
        for key in ("label", "source", "attributes"):
            value = getattr(self, key)
            if value:
                out[key] = value
        out.update(self.data)
        return out


def span_name(agent: str | None, label: str | None) -> str | None:
    if agent is None:
        return None
    return f"invoke_agent {label or agent}"


@dataclass(slots=True)
class Observer:
    """`reactor` is a function (sync or async) of the event, or an agent name run on the event's JSON."""

    event: str
    reactor: Callable[[Event], Any] | str


class EventBus:
    """Fan-out of events to listeners (callables) and observers (filtered by type)."""

    __slots__ = ("listeners", "observers", "active", "_tasks", "agent_reactor", "record_warning", "_reporting")

    def __init__(self) -> None:
        self.listeners: list[Callable[[Event], Any]] = []
        self.observers: list[Observer] = []
        self.active = False
        self._tasks: list[asyncio.Future[Any]] = []
        #: Set by the engine: runs an observer agent on an event; returns its outcome (Done, Fail, Interrupt, Pause).
        self.agent_reactor: Callable[[str, Event], Awaitable[Any]] | None = None
        #: Set by the engine: records a warning in the run's report (code, message, path, **details).
        self.record_warning: Callable[..., Any] | None = None
        self._reporting = False

    def listen(self, listener: Callable[[Event], Any]) -> None:
        self.listeners.append(listener)
        self.active = True

    def observe(self, event: str, reactor: Callable[[Event], Any] | str) -> None:
        self.observers.append(Observer(event, reactor))
        self.active = True

    def emit(self, event: Event) -> None:
        if known():  # every listener (--events, the journal, telemetry, observers) sees the masked event
            event.data = mask_data(event.data)
        for listener in self.listeners:
            listener(event)
        for observer in self.observers:
            if observer.event != event.type and observer.event != "*":
                continue
            reactor = observer.reactor
            if isinstance(reactor, str):
                # An observer agent's own events never wake observer agents: that would never end.
                if self.agent_reactor is not None and event.path[:1] != ("@observer",):
                    self._spawn(self._watch_agent(reactor, event))
                continue
            try:
                outcome = reactor(event)
            except Exception as exc:  # a reactor's bug is reported, never the run's end
                self._failed(OBSERVER_FAILED, _describe(reactor), event, exc)
                continue
            if inspect.isawaitable(outcome):
                self._spawn(self._watch(reactor, event, outcome))

    async def _watch(self, reactor: Callable[[Event], Any], event: Event, outcome: Awaitable[Any]) -> None:
        try:
            await outcome
        except Exception as exc:
            self._failed(OBSERVER_FAILED, _describe(reactor), event, exc)

    async def _watch_agent(self, name: str, event: Event) -> None:
        assert self.agent_reactor is not None
        try:
            outcome = await self.agent_reactor(name, event)
        except Exception as exc:
            self._failed(OBSERVER_AGENT_FAILED, f"agent `{name}`", event, exc, agent=name)
            return
        if isinstance(outcome, Fail):
            self._failed(OBSERVER_AGENT_FAILED, f"agent `{name}`", event, outcome.error, agent=name)
        elif not isinstance(outcome, Done):  # no one can resume an observer: stopping for a human is failing
            stopped = type(outcome).__name__.lower()
            self._failed(
                OBSERVER_AGENT_FAILED,
                f"agent `{name}`",
                event,
                f"it stopped ({stopped}) and cannot be resumed",
                agent=name,
            )

    def _failed(self, code: str, who: str, event: Event, error: BaseException | str, **details: Any) -> None:
        reason = f"{type(error).__name__}: {error}" if isinstance(error, BaseException) else str(error)
        message = f"observer {who} of `{event.type}` failed ({reason}); the run went on without it"
        details = {"event": event.type, "error": reason, **details}
        if self.record_warning is not None:
            self.record_warning(code, message, event.path, **details)
        if self._reporting:
            return  # an observer that fails on the warning about an observer's failure: recorded, not re-announced
        self._reporting = True
        try:
            self.emit(Event("warning", event.path, {"code": code, "message": message, "details": details}))
        finally:
            self._reporting = False

    def _spawn(self, awaitable: Awaitable[Any]) -> None:
        self._tasks.append(asyncio.ensure_future(awaitable))

    async def drain(self) -> None:
        """Wait for reactors still running (observer agents), so a run ends after its observers."""
        while self._tasks:
            tasks, self._tasks = self._tasks, []
            await asyncio.gather(*tasks, return_exceptions=True)


def _describe(reactor: Callable[..., Any]) -> str:
    name = getattr(reactor, "__qualname__", None) or type(reactor).__name__
    return f"`{name}`"
