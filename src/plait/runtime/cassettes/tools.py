"""Tool calls ⇄ recorded results: a run's tool results recorded into its cassette (by choice), and served back.

`plait run --record FILE --record-tools` (and `plait test --record
--record-tools`) also keeps what each tool call returned, keyed by the tool's
name and its arguments; replaying a cassette that holds tool results serves
them instead of running the tools, so a run whose tools reach the outside
world replays offline too. Calls of the same tool with the same arguments are
served in the order they were recorded; a call with no recording returns an
error result saying so (the model's next request then differs from the
recorded one, and the replay stops there, naming it).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from ..history import from_json, to_json
from ..tools import ToolCall, ToolOutcome, ToolRunner
from .file import Cassette
from .request import _dumps

if TYPE_CHECKING:
    from plait.core.kinds import ToolNode

__all__ = ["RecordingTools", "ReplayTools", "tool_key"]


def tool_key(name: str, arguments: Any) -> str:
    return hashlib.sha256(_dumps({"tool": name, "arguments": arguments})).hexdigest()[:32]


def outcome_json(outcome: ToolOutcome) -> dict[str, Any]:
    value = outcome.value
    return {
        "content": outcome.content,
        "is_error": outcome.is_error,
        "state": outcome.state,
        "expand": to_json(outcome.expand) if outcome.expand else None,
        "value": value if isinstance(value, (str, int, float, bool, list, dict, type(None))) else outcome.content,
    }


class RecordingTools(ToolRunner):
    """Runs each tool as usual and records what it returned."""

    __slots__ = ("results",)

    def __init__(self, results: list[dict[str, Any]]) -> None:
        super().__init__()
        self.results = results

    async def run(self, call: ToolCall) -> ToolOutcome:
        outcome = await super().run(call)
        self.results.append(
            {
                "key": tool_key(call.tool.name, call.arguments),
                "tool": call.tool.name,
                "arguments": call.arguments,
                "outcome": outcome_json(outcome),
            }
        )
        return outcome


class ReplayTools(ToolRunner):
    """Serves each tool call from the cassette's recorded results; never runs a tool."""

    __slots__ = ("cassette", "_index", "_cursors")

    def __init__(self, cassette: Cassette) -> None:
        super().__init__()
        self.cassette = cassette
        self._index: dict[str, list[dict[str, Any]]] = {}
        for row in cassette.tool_results:
            self._index.setdefault(row["key"], []).append(row)
        self._cursors: dict[str, int] = {}

    def serves(self, tool: ToolNode) -> bool:
        return True  # a replay runs no tool, so it starts no server

    async def run(self, call: ToolCall) -> ToolOutcome:
        key = tool_key(call.tool.name, call.arguments)
        recorded = self._index.get(key) or []
        index = self._cursors.get(key, 0)
        if index >= len(recorded):
            name = self.cassette.source or "the cassette"
            told = "asked again" if recorded else "no recording"
            return ToolOutcome(
                f"{name} has {told} of a call to `{call.tool.name}` with these arguments (replayed runs never run a tool)",
                True,
            )
        self._cursors[key] = index + 1
        out = recorded[index]["outcome"]
        expand = out.get("expand")
        return ToolOutcome(
            str(out.get("content", "")),
            bool(out.get("is_error")),
            out.get("state"),
            from_json(expand) if expand else None,
            out.get("value"),
        )
