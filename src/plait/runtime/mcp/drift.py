"""A server's live tool list → lock records, and two tool lists → what was added, removed or changed.

One comparison serves both `plait mcp lock` (what the new lock changes) and
`plait run` (how the running server differs from the lock the spec was
checked against). A tool changed when its description, input schema or
output schema did; a new title or icon is not a change a spec can notice.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from plait.core.mcp_lock import LockedTool

if TYPE_CHECKING:  # the SDK is imported when a server starts
    from mcp_types import Tool

__all__ = ["Drift", "compare", "locked_tool", "offered_tool"]


@dataclass(frozen=True, slots=True)
class Drift:
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)

    def describe(self) -> str:
        """`added: a, b; removed: c; changed: d` (only the parts that are not empty)."""
        parts = [
            f"{what}: {', '.join(names)}"
            for what, names in (("added", self.added), ("removed", self.removed), ("changed", self.changed))
            if names
        ]
        return "; ".join(parts) or "no change"


def locked_tool(tool: Tool) -> LockedTool:
    """An SDK `Tool` from `tools/list` → its lock record (schemas as the server sent them, in JSON form)."""
    return LockedTool(
        name=tool.name,
        description=tool.description or "",
        input_schema=dict(tool.input_schema) if tool.input_schema is not None else {"type": "object"},
        output_schema=dict(tool.output_schema) if tool.output_schema is not None else None,
        annotations=tool.annotations.model_dump(by_alias=True, exclude_none=True, mode="json")
        if tool.annotations is not None
        else None,
    )


def offered_tool(tool: LockedTool) -> dict[str, Any]:
    """A lock record in the shape of an `McpNode.offered` entry, so live and locked tools compare alike."""
    return {
        "name": tool.name,
        "description": tool.description,
        "input_schema": tool.input_schema,
        "output_schema": tool.output_schema,
        "annotations": tool.annotations,
    }


def compare(before: Iterable[dict[str, Any]], after: Iterable[dict[str, Any]]) -> Drift:
    """What `after` adds, removes and changes relative to `before` (both `offered`-shaped entries), names sorted."""
    old = {t["name"]: t for t in before}
    new = {t["name"]: t for t in after}
    return Drift(
        added=_sorted(n for n in new if n not in old),
        removed=_sorted(n for n in old if n not in new),
        changed=_sorted(n for n in new if n in old and _differs(old[n], new[n])),
    )


def _differs(a: dict[str, Any], b: dict[str, Any]) -> bool:
    keys: Sequence[str] = ("description", "input_schema", "output_schema")
    if "annotations" in a and "annotations" in b:  # an entry read from an older lock has none to compare
        keys = (*keys, "annotations")
    return any((a.get(k) or None) != (b.get(k) or None) for k in keys)


def _sorted(names: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(names))
