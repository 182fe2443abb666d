"""Where a runnable stands in a run (loop iteration, map item) and a path → the value the path names there.

A `Frame` is the innermost loop iteration or map item around the running
code, held in a context variable: asyncio copies it into every task, so the
map items running side by side each see their own `map.index`, and a loop's
frame is reset when its iteration ends. A map item also gets its own table of
finished outputs (`{{NAME}}` inside the body reads the item's own NAME); a
loop iteration shares its parent's, so after the loop `{{NAME}}` is the last
iteration's.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from plait.core.expr import as_record

if TYPE_CHECKING:
    from .context import RunContext

__all__ = ["FRAME", "MISSING", "Frame", "PathError", "as_record", "lookup", "outputs", "read_head", "resolve"]


@dataclass(slots=True)
class Frame:
    #: Finished runnables' outputs by name, as `{{NAME}}` reads them here.
    outputs: dict[str, Any]
    #: {"iteration", "last", "history"} of the innermost loop, or None.
    loop: dict[str, Any] | None = None
    #: {"index", "item"} of the innermost map item, or None.
    map: dict[str, Any] | None = None
    #: Every loop and map around the running code by name (`outer.iteration`, `each.item`): the same dicts.
    named: dict[str, dict[str, Any]] | None = None


FRAME: ContextVar[Frame | None] = ContextVar("plait_frame", default=None)


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class PathError(Exception):
    """A route subject or a map's `over` names something that is not there at run time."""


def outputs(ctx: RunContext) -> dict[str, Any]:
    """The table finished outputs are written to where the caller stands."""
    frame = FRAME.get()
    return ctx.outputs if frame is None else frame.outputs


def lookup(ctx: RunContext, head: str) -> Any:
    """What a path's first part names (besides `input`, `state` and tool parameters), or MISSING."""
    frame = FRAME.get()
    if head == "run":
        return {"input": ctx.run_input}
    if head == "loop":
        return frame.loop if frame is not None and frame.loop is not None else MISSING
    if head == "map":
        return frame.map if frame is not None and frame.map is not None else MISSING
    if frame is None:
        return ctx.outputs.get(head, MISSING)
    # Inside its own body a loop or map has not finished: its name reads what `loop`/`map` gives (the compiler
    # allows only those words there).
    if frame.named is not None and head in frame.named:
        return frame.named[head]
    return frame.outputs.get(head, MISSING)


def read_head(ctx: RunContext, head: str, input: Any) -> Any:
    """What a path's first part names, `input` (what the chain passes in) and `state` included, or MISSING."""
    if head == "input":
        return input
    if head == "state":
        return ctx.state
    return lookup(ctx, head)


def resolve(ctx: RunContext, parts: tuple[str, ...], input: Any, *, null_reads_null: bool = False) -> Any:
    """The value at a path (a route's `on`, a map's `over`, a `with` binding); PathError naming the part that is
    missing. With `null_reads_null`, a field of null is null (an optional record left out) instead of missing."""
    head = parts[0]
    value = read_head(ctx, head, input)
    if value is MISSING:
        raise PathError(f"`{'.'.join(parts)}`: nothing named `{head}` has run yet")
    for i, key in enumerate(parts[1:], 1):
        if value is None and null_reads_null:
            return None
        value = as_record(value)
        if not isinstance(value, dict) or key not in value:
            raise PathError(f"`{'.'.join(parts)}`: `{'.'.join(parts[:i])}` has no field `{key}`")
        value = value[key]
    return value
