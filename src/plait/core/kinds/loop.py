"""`loop NAME = body { ... }` → its graph record and attribute schema.

`max_iterations` is required, but its absence has its own code (P312, unbounded loop), so the schema does
not say so.
"""

from __future__ import annotations

from typing import ClassVar

from ..conditions import Condition
from .base import Attr, Runnable, attr, kind_record

__all__ = ["LoopNode"]

#: What happens when max_iterations run out ("fail" or "last").
ON_EXHAUSTED = "fail"


@kind_record
class LoopNode(Runnable):
    kind: ClassVar[str] = "loop"
    #: Its label shows its shape, not its output (the nodes inside it show theirs).
    undrawn: ClassVar[tuple[str, ...]] = ("output",)
    description: str | None = None
    #: The body's elements in order (one runnable, or an inline chain's elements).
    body: tuple[str, ...] = attr(default=(), contract=True, doc="What each iteration runs.")
    #: None only in a spec with errors (a loop needs `until` or at least a bound).
    until: Condition | None = attr(
        drawn=True, default=None, spec=Attr("condition"), contract=True, doc="The condition that ends it."
    )
    max_iterations: int | None = attr(
        drawn=True, default=None, spec=Attr("int", minimum=1), contract=True, doc="Most iterations."
    )
    on_exhausted: str = attr(
        drawn=True,
        default=ON_EXHAUSTED,
        spec=Attr("symbol", choices=("fail", "last"), default=ON_EXHAUSTED),
        contract=True,
        doc="When the iterations run out: `fail` or `last` (the last output).",
    )
