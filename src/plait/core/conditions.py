"""Checked condition expressions → records the graph carries, and their spec text.

A loop's `until` is compiled from the AST into these records so the runtime
can evaluate them (src/plait/runtime/conditions.py) without importing the dsl, and the
picture and `plait diff` can print them as the spec writes them. An `until`
written as an expression (`until = "{{ 'APPROVED' in review.reply }}"`) is an
`Expr`: its text, evaluated by src/plait/core/expr.py.
"""

from __future__ import annotations

from typing import Union

from plait.core.record import Record, record

__all__ = ["BoolOp", "Compare", "Condition", "Expr", "Field", "Not", "condition_text", "literal_text"]

Literal = Union[str, int, float, bool, None]


@record(kw_only=False)
class Field(Record):
    """A bare `field` (a `bool`): holds when the value at `path` is true."""

    path: tuple[str, ...]


@record(kw_only=False)
class Compare(Record):
    """`path OP value`, OP one of == != < <= > >=."""

    path: tuple[str, ...]
    op: str
    value: Literal


@record(kw_only=False)
class Not(Record):
    operand: "Condition"


@record(kw_only=False)
class BoolOp(Record):
    """`a and b and ...` / `a or b or ...`."""

    op: str
    operands: tuple["Condition", ...]


@record(kw_only=False)
class Expr(Record):
    """An expression (what stands between `{{` and `}}`, stripped) whose value, true or false, decides."""

    text: str


Condition = Union[Field, Compare, Not, BoolOp, Expr]

# Binding strength, for parentheses: comparisons, then `not`, then `and`, then `or`.
_RANK = {"or": 1, "and": 2}


def literal_text(value: Literal) -> str:
    """A literal as the spec writes it: `"accept"`, `true`, `3`."""
    import json  # here, not at the top: only a spec with conditions needs it (~2 ms of a check's start-up)

    return json.dumps(value, ensure_ascii=False)


def condition_text(cond: Condition, rank: int = 0) -> str:
    """The condition as the spec writes it, with parentheses only where precedence needs them."""
    if isinstance(cond, Field):
        return ".".join(cond.path)
    if isinstance(cond, Expr):
        return f"{{{{ {cond.text} }}}}"
    if isinstance(cond, Compare):
        return f"{'.'.join(cond.path)} {cond.op} {literal_text(cond.value)}"
    if isinstance(cond, Not):
        inner = condition_text(cond.operand, 3)
        return f"not {inner}"
    own = _RANK[cond.op]
    text = f" {cond.op} ".join(condition_text(o, own + 1 if i else own) for i, o in enumerate(cond.operands))
    return f"({text})" if own < rank else text
