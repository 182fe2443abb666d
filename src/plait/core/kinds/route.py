"""`route NAME on PATH { LITERAL -> target ... [budget = ...] }` → its graph record (cases, the cases that leave a
loop, a budget)."""

from __future__ import annotations

from dataclasses import field
from typing import ClassVar, Union

from ..conditions import Expr, literal_text
from ..record import Record, record
from ..source import Span
from .base import Runnable, attr, kind_record

__all__ = ["Literal", "RouteBreak", "RouteCase", "RouteNode"]

Literal = Union[str, int, float, bool]


@record(kw_only=False)
class RouteCase(Record):
    """One `LITERAL -> target` line of a route."""

    value: Literal
    target: str
    span: Span | None = field(default=None, compare=False)

    @property
    def label(self) -> str:
        return literal_text(self.value)


@record(kw_only=False)
class RouteBreak(Record):
    """One `LITERAL -> break [LOOP]` line of a route (plait 0.3): the case leaves a loop, whose output is then what
    the route received. `value` is None for `else -> break`; `leaves` is the loop it leaves (the innermost loop
    around the route when the spec names none)."""

    value: Literal | None
    leaves: str
    span: Span | None = field(default=None, compare=False)

    @property
    def label(self) -> str:
        return "else" if self.value is None else literal_text(self.value)


@kind_record
class RouteNode(Runnable):
    kind: ClassVar[str] = "route"
    #: Its label shows its shape, not its output (the nodes inside it show theirs).
    undrawn: ClassVar[tuple[str, ...]] = ("output",)
    description: str | None = None
    #: The path switched on, from what the route receives: ("input", "category"); or an expression's `Expr`.
    subject: tuple[str, ...] | Expr = attr(
        drawn=True, default=("input",), contract=True, doc="The path (or expression) switched on."
    )
    cases: tuple[RouteCase, ...] = attr(default=(), contract=True, doc="Its `LITERAL -> target` lines.")
    #: The `else` target, or None.
    otherwise: str | None = attr(default=None, contract=True, doc="The `else` target.")
    breaks: tuple[RouteBreak, ...] = attr(
        default=(), contract=True, doc="Its `LITERAL -> break [LOOP]` lines: the loop each leaves."
    )

    def targets(self) -> tuple[str, ...]:
        """Every case's target, `else` last, without repeats."""
        out = [c.target for c in self.cases] + ([self.otherwise] if self.otherwise else [])
        return tuple(dict.fromkeys(out))
