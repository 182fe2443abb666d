"""`ask NAME "question" { answer { ... } }` → its graph record (its block: `answer`, and from 0.3 `with`)."""

from __future__ import annotations

from typing import Any, ClassVar

from ..types import TextType, to_json_schema
from .agent import with_attr
from .base import Runnable, attr, kind_record

__all__ = ["AskNode"]


@kind_record
class AskNode(Runnable):
    """A question for a person; `output` is the `answer` type (text without one)."""

    kind: ClassVar[str] = "ask"
    unwritten: ClassVar[tuple[str, ...]] = ("budget",)
    blocks: ClassVar[tuple[str, ...]] = ("answer",)
    block: ClassVar[bool] = True
    question: str = attr(drawn=True, default="", contract=True, doc="What the person is asked.")
    bindings: dict[str, tuple[str, ...]] = with_attr()

    @property
    def answer(self) -> dict[str, Any] | None:
        """The `answer` block as JSON Schema, what an answer is checked against (not strict: optional fields may
        be left out); None for free text."""
        return None if isinstance(self.output, TextType) else to_json_schema(self.output, strict=False)
