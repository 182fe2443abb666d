"""AgentGraph node id → how it is written in the spec (inline parallels as `parallel(a, b)`), for messages."""

from __future__ import annotations

from plait.core.graph import ParallelNode

from ..graph import AgentGraph

__all__ = ["show"]


def show(graph: AgentGraph, node: str) -> str:
    """How a node is written in the spec: inline parallels as `parallel(a, b)`."""
    record = graph.node(node)
    if "/" in node and isinstance(record, ParallelNode):
        return "parallel(" + ", ".join(record.branches) + ")"
    return node
