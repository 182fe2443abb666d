"""`input { ... }` → `@input`, the run's declared input."""

from __future__ import annotations

from typing import ClassVar

from ..types import TEXT, Type
from .base import Node, attr, kind_record

__all__ = ["InputNode"]


@kind_record
class InputNode(Node):
    """`@input`: the run's declared input (`input { ... }`)."""

    kind: ClassVar[str] = "input"
    type: Type = attr(drawn=True, default=TEXT, contract=True, doc="The input's type.")
