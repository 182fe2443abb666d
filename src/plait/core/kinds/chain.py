"""`chain NAME = a -> b -> c` → its graph record (no attributes)."""

from __future__ import annotations

from typing import ClassVar

from .base import Runnable, attr, kind_record

__all__ = ["ChainNode"]


@kind_record
class ChainNode(Runnable):
    kind: ClassVar[str] = "chain"
    unwritten: ClassVar[tuple[str, ...]] = ("budget",)
    elements: tuple[str, ...] = attr(default=(), contract=True, doc="Its elements in order.")
