"""Declaration kind name → its record class: the one registry of kinds.

Each kind is one module here whose record is both the compiled graph's node
and, through its fields' metadata (`base.attr`), the schema of what a spec
may write: value types, bounds, choices, defaults, templates, contracts,
what the diagram draws, what a model request journals, and doc lines. Everything else that lists per-kind facts reads them from here:
the compiler's attribute checks and did-you-mean lists
(src/plait/compiler/schema.py), `plait diff`'s contracts, the runtime (which
runs these records), the editor's completion and the docs' tests.
"""

from __future__ import annotations

from .agent import AgentNode
from .ask import AskNode
from .base import (
    TOOL_CHOICES,
    Attr,
    Meta,
    Node,
    Runnable,
    contracts,
    default_of,
    drawn_fields,
    journaled_fields,
    metas,
    spec_attrs,
)
from .chain import ChainNode
from .consolidate import ConsolidateNode
from .ends import EntryNode, ExitNode
from .input import InputNode
from .loop import LoopNode
from .map import MapNode
from .mcp import McpNode
from .model import ModelNode
from .parallel import JoinNode, ParallelNode
from .route import RouteBreak, RouteCase, RouteNode
from .state import StateNode
from .step import StepNode
from .thread import ThreadNode
from .tool import ToolNode

__all__ = [
    "DECLARED",
    "KINDS",
    "NODE_TYPES",
    "RUNNABLE_KINDS",
    "TOOL_CHOICES",
    "AgentNode",
    "AskNode",
    "Attr",
    "ChainNode",
    "ConsolidateNode",
    "EntryNode",
    "ExitNode",
    "InputNode",
    "JoinNode",
    "LoopNode",
    "MapNode",
    "McpNode",
    "Meta",
    "ModelNode",
    "Node",
    "ParallelNode",
    "RouteBreak",
    "RouteCase",
    "RouteNode",
    "Runnable",
    "StateNode",
    "StepNode",
    "ThreadNode",
    "ToolNode",
    "contracts",
    "default_of",
    "drawn_fields",
    "journaled_fields",
    "metas",
    "spec_attrs",
]

#: The kinds a spec declares, by name.
KINDS: dict[str, type[Node]] = {
    cls.kind: cls
    for cls in (
        ModelNode,
        ToolNode,
        McpNode,
        AgentNode,
        StepNode,
        ChainNode,
        ParallelNode,
        ConsolidateNode,
        RouteNode,
        LoopNode,
        MapNode,
        AskNode,
        InputNode,
        StateNode,
        ThreadNode,
    )
}
#: Every node kind the graph holds: the declared ones, each parallel's join just after them, and the two ends
#: (docs/graph.md's table of node records, in this order).
NODE_TYPES: dict[str, type[Node]] = {}
for _kind, _cls in KINDS.items():
    NODE_TYPES[_kind] = _cls
    if _kind == "parallel":
        NODE_TYPES["join"] = JoinNode
NODE_TYPES.update(entry=EntryNode, exit=ExitNode)
RUNNABLE_KINDS: frozenset[str] = frozenset(k for k, cls in KINDS.items() if issubclass(cls, Runnable))
#: Kinds a declaration writes attributes for (in a block), by name.
DECLARED = tuple(k for k, cls in KINDS.items() if cls.block or spec_attrs(cls))
