"""Specs and a run store → `RunService`: start, watch, decide and cancel runs in this process, journaled.

One `RunService` per `plait serve` process. Each run is an asyncio task through
the runtime's public entry (`Engine.start`, `Engine.restore` + `Run.resume`);
every run is journaled (SQLite beside the spec by default, PostgreSQL with a
store URL), so an ask or an approval leaves it `waiting` and a decision resumes
it by the same path `plait resume` takes. `events` reads the journal, so a
run's event sequence is stable across reconnections and server restarts.

The HTTP layer (src/plait/serve/app.py) and the protocols (A2A, MCP, AG-UI)
only call this class: it is the one contract between them and the runtime.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator

__all__ = ["EntryInfo", "RunEvent", "RunService", "RunView", "ServiceError", "SpecInfo"]

#: The statuses a run can be in, as RunView.status says them.
STATUSES = ("running", "waiting", "done", "error", "cancelled", "max_steps")


class ServiceError(ValueError):
    """A request the service refuses (bad input, unknown spec or entry, a decision that does not fit): one line."""


@dataclass
class EntryInfo:
    name: str
    description: str
    #: JSON Schema of the entry's input (None: plain text).
    input_schema: dict[str, Any] | None
    #: JSON Schema of the entry's output (None: plain text).
    output_schema: dict[str, Any] | None


@dataclass
class SpecInfo:
    #: The file's stem, unique among the served specs.
    name: str
    path: Path
    entries: list[EntryInfo] = field(default_factory=list)


@dataclass
class RunView:
    id: str
    spec: str
    entry: str
    #: One of STATUSES.
    status: str
    stop_reason: str | None = None
    output: Any = None
    error: str | None = None
    #: Each {"id", "kind": "approval"|"ask"|"unknown_outcome", "name", "arguments"|"question", "answer_schema"}.
    pending: list[dict[str, Any]] = field(default_factory=list)
    tokens: dict[str, int] = field(default_factory=lambda: {"input": 0, "output": 0})
    cost: float | None = None
    started: str | None = None
    ended: str | None = None


@dataclass
class RunEvent:
    #: Strictly increasing per run, stable across restarts.
    seq: int
    type: str
    #: The graph path; path[-1] is the node id drawn on the graph.
    path: list[str]
    data: dict[str, Any]


class RunService:
    """The runs of the served specs, in this process; see the module docstring."""

    def __init__(self, specs: list[Path], store: str | None) -> None:
        raise NotImplementedError

    def specs(self) -> list[SpecInfo]:
        raise NotImplementedError

    async def start(self, spec: str, entry: str | None, input: Any) -> str:
        raise NotImplementedError

    async def get(self, run_id: str) -> RunView:
        raise NotImplementedError

    async def list(self, spec: str | None = None, status: str | None = None, limit: int = 100) -> list[RunView]:
        raise NotImplementedError

    def events(self, run_id: str, after: int | None = None) -> AsyncIterator[RunEvent]:
        raise NotImplementedError

    async def decide(self, run_id: str, decisions: list[dict[str, Any]]) -> RunView:
        raise NotImplementedError

    async def cancel(self, run_id: str) -> RunView:
        raise NotImplementedError

    async def wait(self, run_id: str, timeout: float) -> RunView:
        raise NotImplementedError

    async def aclose(self) -> None:
        raise NotImplementedError
