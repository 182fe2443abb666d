"""`state { ... }` → `@state`, the keys tools may write and templates read."""

from __future__ import annotations

from typing import ClassVar

from ..types import TEXT, Type
from .base import Node, attr, kind_record

__all__ = ["StateNode"]


@kind_record
class StateNode(Node):
    """`@state`: the state keys tools may write and templates read."""

    kind: ClassVar[str] = "state"
    type: Type = attr(drawn=True, default=TEXT, contract=True, doc="The state's keys and types.")
