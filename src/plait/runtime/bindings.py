"""A runnable's `with { name: path ... }` and where it runs → the record it receives instead of the chain's input.

A value written as one expression (`n: "{{ len(plan.tasks) }}"`) is evaluated
there in the sandbox (src/plait/core/expr.py), its names read as a path's head.

Each path is read as a template's `{{path}}` is (scope.py): `input...` is what
the chain passes in, `NAME...` an earlier runnable's output where it ran,
`run.input...`, `state...`, and inside a body `loop...`, `map...` or an
enclosing loop or map by name. An optional value left out (null) reads as null
all the way down, as it renders empty in a template. The record is journaled
as a `with` decision, so `plait trace` shows what each runnable was given; a
resume binds again from the same outputs and records nothing twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from plait.core.conditions import Expr, condition_text

from .errors import AgentError
from .scope import MISSING, PathError, read_head, resolve

if TYPE_CHECKING:
    from .context import RunContext

__all__ = ["bind"]


def bind(ctx: RunContext, record: Any, input: Any, path: tuple[str, ...]) -> dict[str, Any]:
    """The record `record.bindings` reads here; AgentError `binding_missing` naming the path that is not there."""
    bound: dict[str, Any] = {}
    for name, parts in record.bindings.items():
        if isinstance(parts, Expr):
            bound[name] = _evaluate(ctx, record, name, parts, input, path)
        else:
            bound[name] = _read(ctx, record, name, parts, input, path)
    ctx.decide("with", record.name, path, "/".join(path), record=bound)
    return bound


def _read(ctx: RunContext, record: Any, name: str, parts: tuple[str, ...], input: Any, path: tuple[str, ...]) -> Any:
    try:  # an optional record left out: its fields read as null too
        return resolve(ctx, parts, input, null_reads_null=True)
    except PathError as exc:
        raise AgentError("binding_missing", f"`{record.name}`: `with` {name}: {exc}", path=path) from None


def _evaluate(ctx: RunContext, record: Any, name: str, expr: Expr, input: Any, path: tuple[str, ...]) -> Any:
    """A binding written as an expression (`n: "{{ len(plan.tasks) }}"`): its value, its names read as a path's head."""
    from plait.core.expr import ExprFailed, evaluate

    def read(head: str) -> Any:
        value = read_head(ctx, head, input)
        if value is MISSING:
            raise AgentError(
                "binding_missing",
                f"`{record.name}`: `with` {name}: `{condition_text(expr)}`: nothing named `{head}` has run yet",
                path=path,
            )
        return value

    try:
        return evaluate(expr.text, read)
    except ExprFailed as exc:
        raise AgentError(
            "expression_failed", f"`{record.name}`: `with` {name}: `{condition_text(expr)}` failed: {exc}", path=path
        ) from None
