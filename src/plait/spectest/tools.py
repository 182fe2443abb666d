"""A test's `tools = { TOOL = [RESULT, ...] }` → a tool runner that serves those results and never runs those tools.

A stood-in tool is not imported, called over HTTP, or started as an MCP server: each call takes the tool's next
result in order, whatever its arguments (an approver's edit included), and becomes the outcome the real tool's
return value would (`result = messages` tools deliver it as messages). Approval is decided before a tool runs, so
an approval-gated tool stood in for still asks for its decision. The tools a test does not name run as usual
(through `inner`, which may serve a cassette's recorded results). A call after a tool's list is used up gets an
error result, and the test fails naming the tool (`missing`).
"""

from __future__ import annotations

from typing import Any

from plait.core.kinds import ToolNode
from plait.runtime.tools import ToolCall, ToolOutcome, ToolRunner

__all__ = ["StandInTools", "stand_in_key"]


def stand_in_key(tool: ToolNode) -> str:
    """How a test names a tool: its name, or "SERVER.TOOL" for an MCP server's."""
    run = tool.run or {}
    if run.get("type") == "mcp":
        return f"{run.get('server')}.{run.get('tool')}"
    return tool.name


class StandInTools(ToolRunner):
    """Serves the results a test gives for its tools; runs every other tool through `inner`."""

    __slots__ = ("results", "inner", "missing", "_cursors")

    def __init__(self, results: dict[str, list[dict[str, Any]]], inner: ToolRunner | None = None) -> None:
        super().__init__()
        self.results = results
        self.inner = inner or ToolRunner()
        #: One message per tool called after its results were used up.
        self.missing: list[str] = []
        self._cursors: dict[str, int] = {}

    def serves(self, tool: ToolNode) -> bool:
        return stand_in_key(tool) in self.results or self.inner.serves(tool)

    async def run(self, call: ToolCall) -> ToolOutcome:
        key = stand_in_key(call.tool)
        given = self.results.get(key)
        if given is None:
            return await self.inner.run(call)
        index = self._cursors.get(key, 0)
        if index >= len(given):
            message = f"`{key}` was called more often than the {len(given)} result(s) the test gives for it"
            if message not in self.missing:
                self.missing.append(message)
            return ToolOutcome(f"the test gives no more results for `{key}` (a stood-in tool never runs)", True)
        self._cursors[key] = index + 1
        item = given[index]
        if "error" in item:
            return ToolOutcome(str(item["error"]), True)
        return self._outcome(call.tool, item.get("result"))

    async def aclose(self) -> None:
        await self.inner.aclose()
        await super().aclose()
