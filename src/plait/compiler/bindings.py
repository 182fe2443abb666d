"""A runnable's `with { name: path ... }` → what it receives: the bound record's type, statically or at one place.

plait 0.3: a step, agent or ask may bind its input from any visible path
instead of taking what the chain passes in. Its input is then a record, one
field per binding, each of the type its path has where the runnable runs;
`input...` in a binding reads what arrives there. A step with `with` and no
`model`, `prompt` or `run` is a record builder: its output is that record.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from plait.core import types as t
from plait.core.conditions import Expr

from .draft import NOTHING

if TYPE_CHECKING:
    from .context import CompileContext

__all__ = ["bindings_of", "heads", "is_builder", "placed_record", "record_of", "static_record"]

#: Heads whose type depends on where the runnable runs: known per instance only (check_flow, flow.walk).
_PLACED = frozenset({"input", "loop", "map"})


def bindings_of(ctx: CompileContext, name: str) -> dict[str, tuple[str, ...] | Expr]:
    """The checked `with` of a declaration (empty without one)."""
    return ctx.values.get(name, NOTHING).get("with") or {}


def is_builder(ctx: CompileContext, name: str) -> bool:
    """A step with `with` and no `model`, `prompt` or `run`: it returns the bound record, calling nothing."""
    decl = ctx.decls.get(name)
    if decl is None or decl.kind != "step" or not bindings_of(ctx, name):
        return False
    values = ctx.values.get(name, NOTHING)
    return values.get("model") is None and values.get("run") is None and "prompt" not in ctx.spans.get(name, {})


def record_of(fields: dict[str, t.Type]) -> t.ObjectType:
    return t.ObjectType(tuple(t.FieldType(n, typed) for n, typed in fields.items()))


def static_record(ctx: CompileContext, name: str, types: dict[str, t.Type]) -> t.Type:
    """The bound record as far as it is known wherever the runnable runs (`input...`, `loop...`, `map...` are any)."""
    return record_of({field: _static(ctx, parts, types) for field, parts in bindings_of(ctx, name).items()})


def heads(ctx: CompileContext, name: str) -> list[str]:
    """The runnables a builder's bindings read by name: their types come first."""
    found = []
    for bound in bindings_of(ctx, name).values():
        for parts in _reads(bound):
            if parts[0] not in _PLACED and ctx.kind(parts[0]) is not None:
                found.append(parts[0])
    return found


def _reads(bound: tuple[str, ...] | Expr) -> list[tuple[str, ...]]:
    """The paths a binding reads: its own, or those of its expression."""
    if isinstance(bound, Expr):
        from .expressions import reads

        return reads(bound.text)
    return [bound]


def _static(ctx: CompileContext, parts: tuple[str, ...] | Expr, types: dict[str, t.Type]) -> t.Type:
    if isinstance(parts, Expr) or parts[0] in _PLACED:  # typed where it runs (check_flow)
        return t.ANY
    head = parts[0]
    base: t.Type | None
    if head == "run" and parts[1:2] == ("input",):
        base, rest = ctx.input_type, parts[2:]
    elif head == "state":
        base, rest = ctx.state_type, parts[1:]
    else:
        base, rest = types.get(head), parts[1:]
    if base is None:
        return t.ANY
    found = t.lookup(base, rest)
    return found if found is not None else t.ANY


def placed_record(
    ctx: CompileContext, name: str, resolve: Callable[[tuple[str, ...]], t.Type | None]
) -> t.ObjectType | None:
    """The bound record at one place, each path typed by `resolve` (None where it does not resolve: any)."""
    bound = bindings_of(ctx, name)
    if not bound:
        return None
    return record_of({field: _placed(parts, resolve) or t.ANY for field, parts in bound.items()})


def _placed(bound: tuple[str, ...] | Expr, resolve: Callable[[tuple[str, ...]], t.Type | None]) -> t.Type | None:
    if not isinstance(bound, Expr):
        return resolve(bound)
    from .expressions import check

    typed, _ = check(bound.text, lambda parts, start, end: resolve(parts))  # findings: check_flow's
    return typed
