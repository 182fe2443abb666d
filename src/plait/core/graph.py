"""Compiled declarations → the typed graph's records: the node kinds (src/plait/core/kinds/), one edge record.

The compiler builds these (src/plait/compiler/passes/build_graph.py) and everything
after it (render, diff, `plait graph --json`, the runtime's `Program`)
reads them by attribute. docs/graph.md is the contract; `record_json` and
`edge_json` are the one serialisation, and a test holds them to the document.
Values are normalised: defaults are filled in (each kind record's own), names
are node ids, tuples stand for lists, and every runnable carries its
inferred output type (`core.types`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator, Protocol, get_args

from .budget import Budget
from .catalogue import ModelInfo
from .conditions import Condition, condition_text
from .kinds import (
    NODE_TYPES,
    RUNNABLE_KINDS,
    AgentNode,
    AskNode,
    ChainNode,
    ConsolidateNode,
    EntryNode,
    ExitNode,
    InputNode,
    JoinNode,
    LoopNode,
    MapNode,
    McpNode,
    ModelNode,
    Node,
    ParallelNode,
    RouteBreak,
    RouteCase,
    RouteNode,
    Runnable,
    StateNode,
    StepNode,
    ThreadNode,
    ToolNode,
)
from .kinds.route import Literal
from .record import Record, field_names, record
from .source import Span
from .types import Type, to_json_schema

__all__ = [
    "AgentNode",
    "AskNode",
    "ChainNode",
    "ConsolidateNode",
    "EDGE_ATTRS",
    "EDGE_KINDS",
    "Edge",
    "EntryNode",
    "GraphView",
    "ExitNode",
    "InputNode",
    "JoinNode",
    "LoopNode",
    "MapNode",
    "McpNode",
    "ModelNode",
    "NODE_TYPES",
    "Node",
    "ParallelNode",
    "RUN_EDGES",
    "RUNNABLE_KINDS",
    "RouteBreak",
    "RouteCase",
    "RouteNode",
    "Runnable",
    "StateNode",
    "StepNode",
    "ThreadNode",
    "ToolNode",
    "edge_json",
    "node_attrs",
    "record_json",
]


@record
class Edge(Record):
    """One edge. Which optional fields a kind carries is `EDGE_ATTRS[kind]`; the rest stay None."""

    kind: str
    source: str
    target: str
    #: Where the reference was written (None for edges touching `@entry`/`@exit`).
    span: Span | None = None
    #: What the picture writes on it: a case's literal or `else`, a back edge's condition and bound.
    label: str | None = None
    #: next/body/each: the chain, loop or map whose order this is (None for `@entry`/`@exit` edges).
    chain: str | None = None
    #: next/body: 0-based position of the target; participant: the agent's position.
    index: int | None = None
    #: branch/join: the branch's name.
    branch: str | None = None
    #: uses: this agent must get approval for the tool.
    approval: bool | None = None
    #: fallback: 1-based.
    order: int | None = None
    #: until: `until = TOOL succeeded`.
    succeeded: bool | None = None
    #: case: the literal (None for `else`).
    value: Literal | None = None
    #: back: the loop's max_iterations.
    bound: int | None = None
    #: reads: the path read (`("classify", "category")`).
    path: tuple[str, ...] | None = None
    #: uses/until (agent → mcp): the one tool named (`files.read_text_file`), None for all of them; delegates: the
    #: agent tool (`run = delegate(AGENT)`) it delegates through, None for the agent listed itself.
    tool: str | None = None


#: Edge kind → the optional fields it carries (and that its JSON `attrs` hold), in docs/graph.md order.
EDGE_ATTRS: dict[str, tuple[str, ...]] = {
    "next": ("chain", "index"),
    "branch": ("branch",),
    "join": ("branch",),
    "uses": ("approval", "tool"),
    "delegates": ("tool",),
    "calls": (),
    "fallback": ("order",),
    "judge": (),
    "participant": ("index",),
    "until": ("succeeded", "tool"),
    "case": ("label", "value"),
    "body": ("chain", "index"),
    "back": ("label", "bound"),
    "each": ("chain", "index"),
    "reads": ("path",),
    "handoff": ("index",),
    "break": ("label",),
    "thread": (),
}
EDGE_KINDS = tuple(EDGE_ATTRS)
#: Edges a run travels (control flow), as opposed to resources (calls, uses, fallback) and contracts.
#: `back` closes a loop's one allowed cycle; every other cycle on these edges is an error.
RUN_EDGES = ("next", "branch", "join", "case", "body", "back", "each")


# --- JSON ------------------------------------------------------------------------

_OWN = ("name", "span", "file")
_LAST = ("budget", "output")
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def node_attrs(cls: type[Node]) -> tuple[str, ...]:
    """The attribute names a node kind carries beyond name/span/file, in declaration order."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = tuple(name for name in field_names(cls) if name not in _OWN and name not in _LAST)
        # The budget and the output type last: they read after what the runnable is.
        names = _FIELD_NAMES[cls] = names + (_LAST if issubclass(cls, Runnable) else ())
    return names


def _jsonable(value: Any, relative: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return relative(value)
    if isinstance(value, tuple | list):
        return [_jsonable(v, relative) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v, relative) for k, v in value.items()}
    if isinstance(value, RouteCase):
        return {"value": value.value, "target": value.target}
    if isinstance(value, RouteBreak):
        return {"value": value.value, "leaves": value.leaves}
    if isinstance(value, _TYPES):
        return to_json_schema(value, strict=False)
    if isinstance(value, _CONDITIONS):
        return condition_text(value)
    if isinstance(value, ModelInfo | Budget):
        return value.to_json()
    return value


_TYPES = get_args(Type)
_CONDITIONS = get_args(Condition)


def record_json(node: Node, relative: Callable[[str], str] = str) -> dict[str, Any]:
    """A node's JSON `attrs`: every attribute of its kind; types as JSON Schema, conditions as spec text.

    `relative` rewrites strings (absolute paths differ per machine)."""
    return {name: _jsonable(getattr(node, name), relative) for name in node_attrs(type(node))}


def edge_json(edge: Edge, relative: Callable[[str], str] = str) -> dict[str, Any]:
    """An edge's JSON `attrs`: exactly the fields its kind carries."""
    return {name: _jsonable(getattr(edge, name), relative) for name in EDGE_ATTRS[edge.kind]}


class GraphView(Protocol):
    """What a reader below the compiler (the runtime) may rely on: `compiler.graph.AgentGraph` is one."""

    entry: str | None
    base_dir: Path | None

    def node(self, id: str) -> Node: ...

    def nodes(self) -> Iterator[Node]: ...

    def nodes_of(self, *kinds: str) -> list[str]: ...

    def edges(self, *kinds: str) -> Iterator[Edge]: ...
