"""`map NAME = body { over = ..., ... }` → its graph record and attribute schema."""

from __future__ import annotations

from typing import ClassVar

from ..conditions import Condition
from .base import Attr, Runnable, attr, kind_record
from .parallel import ON_ERROR

__all__ = ["MapNode"]

#: Items run at once.
CONCURRENCY = 4
#: A map's `on_error`: a parallel's two, and `drop` (a failed item is left out of the list).
MAP_ON_ERROR_ATTR = Attr(
    "symbol",
    choices=("fail", "collect", "drop"),
    default=ON_ERROR,
    doc="`fail` (the first failure cancels the rest), `collect` (`{error}` in its place) or `drop` (left out).",
)


@kind_record
class MapNode(Runnable):
    kind: ClassVar[str] = "map"
    #: Its label shows its shape, not its output (the nodes inside it show theirs).
    undrawn: ClassVar[tuple[str, ...]] = ("output",)
    description: str | None = None
    body: tuple[str, ...] = attr(default=(), contract=True, doc="What each item runs.")
    #: The list's path: ("input", "sections").
    over: tuple[str, ...] = attr(
        drawn=True, default=("input",), spec=Attr("path", required=True), contract=True, doc="The path of the list."
    )
    concurrency: int = attr(
        drawn=True,
        default=CONCURRENCY,
        spec=Attr("int", default=CONCURRENCY, minimum=1),
        contract=True,
        doc="Items run at once (default 4).",
    )
    #: Items for which it does not hold are skipped: not run, and not in the output (src/plait/runtime/mapping.py).
    filter: Condition | None = attr(
        drawn=True,
        default=None,
        spec=Attr("condition"),
        contract=True,
        doc='Which items run: a condition over the item\'s fields (`priority == "high"`); the rest are skipped.',
    )
    on_error: str = attr(drawn=True, default=ON_ERROR, spec=MAP_ON_ERROR_ATTR, contract=True)
    #: The most items the list may hold: what bounds the map's cost (`plait cost`); a longer list fails the map
    # before any item runs (src/plait/runtime/mapping.py). None: no bound is declared.
    max_items: int | None = attr(
        drawn=True,
        default=None,
        spec=Attr("int", minimum=1),
        contract=True,
        doc="The most items it runs; a longer list fails it before any item runs.",
    )
