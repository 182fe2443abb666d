"""What a pipeline step decides → Continue, or a terminal result the runner passes through.

`Done` covers every normal end (`done`, `until`, `max_steps`); `Interrupt`
waits for a human decision per pending call; `Pause` stops with an optional
reason; `Fail` carries the exception the run ends with.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CONTINUE",
    "NEXT_TURN",
    "Continue",
    "Decision",
    "Done",
    "EFFECT_ACTIONS",
    "Fail",
    "Interrupt",
    "Outcome",
    "Pause",
    "PendingAsk",
    "PendingCall",
    "PendingEffect",
    "merge_stops",
]


class Continue:
    __slots__ = ()

    def __repr__(self) -> str:
        return "CONTINUE"


#: The step is fine; run the next one.
CONTINUE = Continue()


class _NextTurn(Continue):
    __slots__ = ()

    def __repr__(self) -> str:
        return "NEXT_TURN"


#: Skip the rest of this turn and loop (a reflect-and-retry step re-asks the model).
NEXT_TURN = _NextTurn()


@dataclass(slots=True)
class Done:
    output: Any
    #: "done", "until", "max_steps", "handoff" or "break" (a route case left a loop, on its way up to it).
    reason: str = "done"
    #: For `until`: the until tool's result content; for "handoff" the target; for "break" the loop it leaves.
    until_result: Any = None
    finish_reason: str | None = None
    #: An agent's hosted tools' reports by tool name (what `{{TOOL.citations}}` reads), or None.
    hosted: dict[str, Any] | None = None


@dataclass(slots=True)
class PendingCall:
    """One tool call waiting for a human; `id` is unique across the whole run."""

    id: str
    path: tuple[str, ...]
    agent: str
    call_id: str
    tool: str
    arguments: dict[str, Any] | None
    branch: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "agent": self.agent,
            "branch": self.branch,
            "path": list(self.path),
            "tool": self.tool,
            "call_id": self.call_id,
            "arguments": self.arguments,
        }


@dataclass(slots=True)
class PendingAsk:
    """An `ask` waiting for a person's answer; `id` is the ask's graph path, unique across the run."""

    id: str
    path: tuple[str, ...]
    ask: str
    question: str
    #: JSON Schema the answer must fit; None = free text.
    schema: dict[str, Any] | None
    branch: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": "ask",
            "ask": self.ask,
            "question": self.question,
            "answer_schema": self.schema,
            "branch": self.branch,
            "path": list(self.path),
        }


@dataclass(slots=True)
class PendingEffect:
    """A tool call whose outcome is unknown (the run stopped while it ran), waiting for retry or skip."""

    id: str
    tool: str
    call_id: str
    arguments: dict[str, Any] | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": "unknown_outcome",
            "tool": self.tool,
            "call_id": self.call_id,
            "arguments": self.arguments,
            "actions": sorted(EFFECT_ACTIONS),
        }


@dataclass(slots=True)
class Interrupt:
    #: Tool calls waiting for approval and asks waiting for an answer.
    pending: list[PendingCall | PendingAsk] = field(default_factory=list)


@dataclass(slots=True)
class Pause:
    reason: str | None = None
    #: Tool calls of unknown outcome the pause waits on (`--decide ID=retry|skip`), so no one scrapes the reason.
    pending: list[PendingEffect] = field(default_factory=list)


@dataclass(slots=True)
class Fail:
    error: BaseException


#: Answers to a tool call of unknown outcome (src/plait/runtime/store/effects.py): run it again, or tell the model it may not have run.
EFFECT_ACTIONS = frozenset({"retry", "skip"})


#: Answers to a pending approval. `approve_same` approves this call and, for the rest of the run, every call of
#: the same tool with the same arguments (remembered as this decision, journaled with it).
APPROVAL_ACTIONS = ("approve", "approve_same", "edit", "reject")


@dataclass(slots=True)
class Decision:
    """A human's answer to one pending call: approve, approve_same, edit (new arguments) or reject (message);
    or, for a tool call whose outcome is unknown after a crash, retry or skip (EFFECT_ACTIONS).

    An `approve_same` decision carries the call's tool and arguments (filled in by `Run.resume` from the pending
    call), which later calls are compared with."""

    action: str
    arguments: dict[str, Any] | None = None
    message: str | None = None
    tool: str | None = None

    def __post_init__(self) -> None:
        if self.action not in APPROVAL_ACTIONS and self.action not in EFFECT_ACTIONS:
            raise ValueError(
                f"decision must be approve, approve_same, edit, reject, retry or skip, not {self.action!r}"
            )
        if self.action == "edit" and not isinstance(self.arguments, dict):
            raise ValueError("an edit decision needs the new arguments as an object")

    @classmethod
    def of(cls, value: "Decision | str | dict[str, Any]") -> "Decision":
        if isinstance(value, Decision):
            return value
        if isinstance(value, str):
            return cls(value)
        return cls(value.get("action", ""), value.get("arguments"), value.get("message"), value.get("tool"))

    def to_json(self) -> dict[str, Any]:
        out = {"action": self.action, "arguments": self.arguments, "message": self.message}
        if self.tool is not None:
            out["tool"] = self.tool
        return out


def approved_before(decisions: dict[str, Decision], tool: str, arguments: Any) -> bool:
    """Whether an `approve_same` answer earlier in the run covers a call of `tool` with these arguments."""
    return any(d.action == "approve_same" and d.tool == tool and d.arguments == arguments for d in decisions.values())


Outcome = Continue | Done | Interrupt | Pause | Fail


def merge_stops(stops: list[Interrupt | Pause]) -> Interrupt | Pause:
    """Stops of calls or branches that ran side by side → one: every pending call at once, else the first stop."""
    pending = [p for s in stops if isinstance(s, Interrupt) for p in s.pending]
    if pending:
        return Interrupt(pending)
    unknown = [p for s in stops if isinstance(s, Pause) for p in s.pending]
    if len(unknown) > 1:  # every call of unknown outcome at once, as for approvals
        first = next(s for s in stops if isinstance(s, Pause))
        return Pause(first.reason, unknown)
    return stops[0]
