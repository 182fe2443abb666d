"""Lifecycle moments of a run → typed events for the CLI, the store, observers and telemetry.

Event types: `run_start`, `run_end`, `agent_start`, `agent_end`, `step_start`,
`step_end`, `text`, `tool_call_delta`, `tool_call_start`, `tool_call_end`,
`warning`, `interrupt`, `pause`, `consolidate_round`. Every event carries the
graph `path` of the run that produced it (nested agents and branches included)
and the agent's telemetry names (`label`, `source`, `attributes`).
Events are only built when someone listens: the hot loop checks `bus.active`.
"""

from __future__ import annotations

import asyncio
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = ["Event", "EventBus", "Observer", "span_name"]


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

    __slots__ = ("listeners", "observers", "active", "_tasks", "agent_reactor")

    def __init__(self) -> None:
        self.listeners: list[Callable[[Event], Any]] = []
        self.observers: list[Observer] = []
        self.active = False
        self._tasks: list[asyncio.Task[Any]] = []
        #: Set by the engine: runs an observer agent on an event.
        self.agent_reactor: Callable[[str, Event], Any] | None = None

    def listen(self, listener: Callable[[Event], Any]) -> None:
        self.listeners.append(listener)
        self.active = True

    def observe(self, event: str, reactor: Callable[[Event], Any] | str) -> None:
        self.observers.append(Observer(event, reactor))
        self.active = True

    def emit(self, event: Event) -> None:
        for listener in self.listeners:
            listener(event)
        for observer in self.observers:
            if observer.event != event.type and observer.event != "*":
                continue
            if isinstance(observer.reactor, str):
                # An observer agent's own events never wake observer agents: that would never end.
                if self.agent_reactor is not None and event.path[:1] != ("@observer",):
                    self._spawn(self.agent_reactor(observer.reactor, event))
                continue
            outcome = observer.reactor(event)
            if inspect.isawaitable(outcome):
                self._spawn(outcome)

    def _spawn(self, awaitable: Any) -> None:
        self._tasks.append(asyncio.ensure_future(awaitable))

    async def drain(self) -> None:
        """Wait for reactors still running (observer agents), so a run ends after its observers."""
        while self._tasks:
            tasks, self._tasks = self._tasks, []
            await asyncio.gather(*tasks, return_exceptions=True)
