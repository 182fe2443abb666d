"""One run's history → rows in the journal; the rows of an earlier attempt → what its resume replays.

A `RunJournal` is what the runtime's seams talk to (`ctx.journal`): it numbers
rows, names each model and tool call by its position in the run (graph path,
step, call id, and an occurrence count should the same position come round
again), and, for a resumed run, answers "was this already done?" from the rows
the earlier attempt committed. Replay is by position, never by order, so
parallel branches that finished in another order replay the same.
"""

from __future__ import annotations

import hashlib
from typing import Any

from ..cassettes.request import RunKeys
from .base import Journal, storable
from .requests import RequestRows

__all__ = ["RunJournal", "idempotency_key", "pending_id"]


def idempotency_key(run_id: str, position: str) -> str:
    """Stable per run and call position: the same call, retried, presents the same key."""
    return "plait-" + hashlib.sha256(f"{run_id}\x00{position}".encode()).hexdigest()[:32]


def pending_id(position: str, call_id: str) -> str:
    """A tool call's position (`PATH#STEP[~N]:CALL_ID`) → the id a person decides it by (`PATH:CALL_ID`)."""
    turn = position[: -(len(call_id) + 1)]
    return f"{turn.rsplit('#', 1)[0]}:{call_id}"


class RunJournal:
    __slots__ = (
        "store",
        "run_id",
        "seq",
        "admitted",
        "_seen",
        "_turn",
        "_replies",
        "_errors",
        "_intents",
        "_completed",
        "_decisions",
        "provider_state",
        "approvals",
        "unknown",
        "effect_decisions",
        "base",
        "requests",
        "keys",
    )

    def __init__(self, store: Journal, run_id: str, events: list[dict[str, Any]] | None = None) -> None:
        self.store = store
        self.run_id = run_id
        self.seq = 0
        self.admitted = events is not None
        #: How often each position has come round in this attempt.
        self._seen: dict[str, int] = {}
        #: Per agent-run key, the position of its latest model call (its tool calls hang off it).
        self._turn: dict[str, str] = {}
        self._replies: dict[str, dict[str, Any]] = {}
        self._errors: dict[str, dict[str, Any]] = {}
        self._intents: dict[str, dict[str, Any]] = {}
        self._completed: dict[str, dict[str, Any]] = {}
        self._decisions: dict[tuple[str, str], dict[str, Any]] = {}
        #: Per model: the provider state after its last recorded call (a scripted model's cursors).
        self.provider_state: dict[str, Any] = {}
        #: Approval decisions of earlier attempts, by pending id.
        self.approvals: dict[str, dict[str, Any]] = {}
        #: Calls whose outcome is unknown and wait for a person: pending id -> (position, attempt).
        self.unknown: dict[str, tuple[str, int]] = {}
        #: retry/skip decisions for unknown outcomes: pending id -> (action, attempt it answers).
        self.effect_decisions: dict[str, tuple[str, int]] = {}
        #: The JSON snapshot a run continued from when it came into the journal mid-way (plait 0.1's store, an import).
        self.base: dict[str, Any] | None = None
        #: The fields of this run's request rows and its replies' request keys, each message encoded once.
        self.requests = RequestRows()
        self.keys = RunKeys()
        for row in events or ():
            self._load(row)

    def _load(self, row: dict[str, Any]) -> None:
        kind, key, data = row["kind"], row["key"], row["data"]
        self.seq = max(self.seq, row["seq"])
        if kind == "base":
            self.base = data
        elif kind == "model_request":
            self.requests.bodies.update(data.get("bodies") or ())
        elif kind == "model_reply":
            self._replies[key] = data
            self.provider_state.update(data.get("providers") or {})
        elif kind == "model_error":
            self._errors[key] = data
            self.provider_state.update(data.get("providers") or {})
        elif kind == "tool_intent":
            self._intents[key] = data
            self._settled(key)
            if data.get("call_id") is not None and not data.get("code"):
                # Until its completion row comes, this call's outcome is unknown: a resume may settle it up front
                # (`--decide ID=retry|skip` on a run that crashed), without first pausing on it.
                self.unknown[pending_id(key, data["call_id"])] = (key, data.get("attempt", 1))
        elif kind == "tool_completed":
            self._completed[key] = data
            self._settled(key)
        elif kind == "pause" and data.get("call"):
            self.unknown[data["call"]] = (key, self._intents[key].get("attempt", 1))
        elif kind == "decision":
            if data.get("kind") == "approval":
                self.approvals[key] = data
            elif data.get("kind") == "effect":
                self.effect_decisions[key] = (data["action"], data["attempt"])
            self._decisions[(data.get("kind", ""), key or "")] = data

    def _settled(self, position: str) -> None:
        for pid, (where, _) in list(self.unknown.items()):
            if where == position:
                del self.unknown[pid]

    # -- writing ---------------------------------------------------------------------

    def record(self, kind: str, key: str | None, data: Any) -> None:
        """Buffer one row; it is committed before the next side effect of any run starts."""
        self.seq += 1
        self.store.event(self.run_id, self.seq, kind, key, data)  # the store keeps `storable(key)`

    async def durable(self) -> None:
        await self.store.durable()

    def record_decision(self, kind: str, data: dict[str, Any], key: str | None = None) -> None:
        """A decision the run took or was given: approval, route case, loop iteration, map item, ask answer."""
        row = {"kind": kind, **data}
        self.record("decision", key, row)
        self._decisions[(kind, storable(key or ""))] = row

    def decision(self, kind: str, key: str) -> dict[str, Any] | None:
        """A decision recorded at `key` by this run (an earlier attempt's included): what a resume reuses."""
        return self._decisions.get((kind, storable(key)))

    def decisions_of(self, kind: str) -> list[tuple[str, dict[str, Any]]]:
        """Every (key, data) recorded for one kind of decision."""
        return [(key, d) for (k, key), d in self._decisions.items() if k == kind]

    def record_state(self, path: tuple[str, ...], updates: dict[str, Any]) -> None:
        self.record("state", "/".join(path), updates)

    # -- positions -------------------------------------------------------------------

    def model_position(self, path: tuple[str, ...], step: int) -> str:
        base = f"{'/'.join(path)}#{step}"
        count = self._seen.get(base, 0) + 1
        self._seen[base] = count
        position = storable(base if count == 1 else f"{base}~{count}")
        self._turn["/".join(path)] = position
        return position

    def tool_position(self, run_key: str, steps: int, call_id: str) -> str:
        # Positions are keys as stored (a model's call id may hold a lone surrogate), so a resume finds its rows.
        return storable(f"{self._turn.get(run_key) or f'{run_key}#{steps}'}:{call_id}")

    # -- replay ----------------------------------------------------------------------

    def reply(self, position: str) -> dict[str, Any] | None:
        return self._replies.get(position)

    def completed(self, position: str) -> dict[str, Any] | None:
        return self._completed.get(position)

    def intent(self, position: str) -> dict[str, Any] | None:
        return self._intents.get(position)
