"""`map NAME = body { over = ..., ... }` → its graph record and attribute schema."""

from __future__ import annotations

from typing import ClassVar

from .base import Attr, Runnable, attr, kind_record
from .parallel import ON_ERROR, ON_ERROR_ATTR

__all__ = ["MapNode"]

#: Items run at once.
CONCURRENCY = 4


@kind_record
class MapNode(Runnable):
    kind: ClassVar[str] = "map"
    description: str | None = None
    body: tuple[str, ...] = attr(default=(), contract=True, doc="What each item runs.")
    #: The list's path: ("input", "sections").
    over: tuple[str, ...] = attr(
        default=("input",), spec=Attr("path", required=True), contract=True, doc="The path of the list."
    )
    concurrency: int = attr(
        default=CONCURRENCY,
        spec=Attr("int", default=CONCURRENCY, minimum=1),
        contract=True,
        doc="Items run at once (default 4).",
    )
    on_error: str = attr(default=ON_ERROR, spec=ON_ERROR_ATTR, contract=True)
    #: The most items the list may hold: what bounds the map's cost (`plait cost`); a longer list fails the map
    # before any item runs (src/plait/runtime/mapping.py). None: no bound is declared.
    max_items: int | None = attr(
        default=None,
        spec=Attr("int", minimum=1),
        contract=True,
        doc="The most items it runs; a longer list fails it before any item runs.",
    )
