"""A loop's `until` expression and the body's output → whether it holds.

Expressions are src/plait/core/conditions.py's records (what the graph carries):
`Field(path)` (a bool field), `Compare(path, op, value)`, `Not(operand)`,
`BoolOp(op, operands)`, `Expr(text)` (an expression, src/plait/core/expr.py). A
path's first part is a field of the body's output, or else the name of a
runnable inside the body (`review.verdict`).
"""

from __future__ import annotations

import json
import operator
from collections.abc import Callable, Mapping
from typing import Any

from plait.core.conditions import BoolOp, Compare, Condition, Expr, Field, Not, condition_text

from .scope import as_record

__all__ = ["BoolOp", "Compare", "Condition", "ConditionError", "Field", "Not", "condition_text", "holds", "same"]


class ConditionError(Exception):
    """The condition cannot be decided on this output (a field it reads is missing, or types do not compare)."""


def same(a: Any, b: Any) -> bool:
    # `true == 1` holds in Python but not in a spec: a bool equals only a bool.
    return a == b and isinstance(a, bool) == isinstance(b, bool)


_ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def _read(path: tuple[str, ...], output: Any, names: Mapping[str, Any]) -> Any:
    head = path[0]
    record = as_record(output)
    if isinstance(record, dict) and head in record:
        value = record[head]
    elif head in names:
        value = names[head]
    else:
        raise ConditionError(f"`{'.'.join(path)}`: the body's output has no field `{head}`")
    for key in path[1:]:
        value = as_record(value)
        if not isinstance(value, dict) or key not in value:
            raise ConditionError(f"`{'.'.join(path)}`: no field `{key}` there")
        value = value[key]
    return value


def holds(cond: Condition, output: Any, names: Mapping[str, Any]) -> bool:
    """Evaluate `cond`; `names` are the outputs of runnables inside the body, by name."""
    if isinstance(cond, Compare):
        left = _read(cond.path, output, names)
        if cond.op == "==":
            return same(left, cond.value)
        if cond.op == "!=":
            return not same(left, cond.value)
        numbers = (int, float)
        if (
            isinstance(left, bool)
            or not isinstance(left, numbers)
            or isinstance(cond.value, bool)
            or not isinstance(cond.value, numbers)
        ):
            raise ConditionError(f"`{condition_text(cond)}`: {json.dumps(left)} is not a number")
        return _ORDER[cond.op](left, cond.value)
    if isinstance(cond, Field):
        value = _read(cond.path, output, names)
        if not isinstance(value, bool):
            raise ConditionError(f"`{'.'.join(cond.path)}` is {json.dumps(value)}, not true or false")
        return value
    if isinstance(cond, Not):
        return not holds(cond.operand, output, names)
    if isinstance(cond, Expr):
        return _expression(cond, output, names)
    if cond.op == "and":
        return all(holds(c, output, names) for c in cond.operands)
    return any(holds(c, output, names) for c in cond.operands)


def _expression(cond: Expr, output: Any, names: Mapping[str, Any]) -> bool:
    """An expression's value on this output: its names read as a path's first part does; true or false only."""
    from plait.core.expr import ExprFailed, evaluate

    record = as_record(output)

    def read(name: str) -> Any:
        if isinstance(record, dict) and name in record:
            return record[name]
        if name in names:
            return names[name]
        raise ConditionError(f"`{condition_text(cond)}`: the body's output has no field `{name}`")

    try:
        value = evaluate(cond.text, read, absent="")
    except ExprFailed as exc:
        raise ConditionError(f"`{condition_text(cond)}` failed: {exc}") from None
    if not isinstance(value, bool):
        raise ConditionError(f"`{condition_text(cond)}` is {json.dumps(value, default=str)}, not true or false")
    return value
