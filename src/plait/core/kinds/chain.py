"""`chain NAME = a -> b -> c [{ budget = ... }]` → its graph record."""

from __future__ import annotations

from typing import ClassVar

from .base import Runnable, attr, kind_record

__all__ = ["ChainNode"]


@kind_record
class ChainNode(Runnable):
    kind: ClassVar[str] = "chain"
    elements: tuple[str, ...] = attr(default=(), contract=True, doc="Its elements in order.")
