"""`parallel NAME = [a, b] { ... }` → its graph record and attribute schema; the join node it meets at."""

from __future__ import annotations

from typing import ClassVar

from .base import Attr, Node, Runnable, attr, kind_record

__all__ = ["JoinNode", "ParallelNode"]

#: The first failure cancels the rest ("fail") or every result is kept ("collect"); a map's too.
ON_ERROR = "fail"
ON_ERROR_ATTR = Attr(
    "symbol",
    choices=("fail", "collect"),
    default=ON_ERROR,
    doc="`fail` (the first failure cancels the rest) or `collect`.",
)


@kind_record
class ParallelNode(Runnable):
    """A parallel is its own fork: its `branch` edges leave it; `join` names the node they meet at."""

    kind: ClassVar[str] = "parallel"
    #: Its label shows its shape, not its output (the nodes inside it show theirs).
    undrawn: ClassVar[tuple[str, ...]] = ("output",)
    branches: tuple[str, ...] = attr(default=(), contract=True, doc="Its branches, run at once on one input.")
    on_error: str = attr(drawn=True, default=ON_ERROR, spec=ON_ERROR_ATTR, contract=True)
    join: str = ""


@kind_record
class JoinNode(Node):
    kind: ClassVar[str] = "join"
    parallel: str = ""
