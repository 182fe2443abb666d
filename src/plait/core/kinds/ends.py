"""`@entry` and `@exit` → the graph's two generated ends (no declaration writes them)."""

from __future__ import annotations

from typing import ClassVar

from .base import Node, kind_record

__all__ = ["EntryNode", "ExitNode"]


@kind_record
class EntryNode(Node):
    kind: ClassVar[str] = "entry"


@kind_record
class ExitNode(Node):
    kind: ClassVar[str] = "exit"
