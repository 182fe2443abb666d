"""`consolidate NAME { ... }` → its graph record and attribute schema."""

from __future__ import annotations

from typing import ClassVar

from .base import Attr, Runnable, attr, kind_record

__all__ = ["ConsolidateNode"]

#: Debate rounds, and the task every agent is given.
ROUNDS = 3
TASK = "{{input}}"


@kind_record
class ConsolidateNode(Runnable):
    kind: ClassVar[str] = "consolidate"
    #: Its label shows its shape, not its output (the nodes inside it show theirs).
    undrawn: ClassVar[tuple[str, ...]] = ("output",)
    agents: tuple[str, ...] = attr(
        default=(), spec=Attr("refs", required=True, kinds=("agent",)), contract=True, doc="The agents (two or more)."
    )
    judge: str = attr(
        drawn=True,
        default="",
        spec=Attr("ref", required=True, kinds=("model", "agent")),
        contract=True,
        doc="The model or agent that decides whether they agree.",
    )
    rounds: int = attr(
        drawn=True,
        default=ROUNDS,
        spec=Attr("int", default=ROUNDS, minimum=1),
        contract=True,
        doc="Most rounds (default 3).",
    )
    task: str = attr(
        drawn=True,
        default=TASK,
        spec=Attr("template", default=TASK),
        doc="What every agent is given (template; `{{input}}`).",
    )
