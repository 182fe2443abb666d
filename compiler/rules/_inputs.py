"""AgentGraph → what each runnable receives as `{{input}}`, at every place it is used.

A runnable's input is text (after an agent, step or consolidate, or when it is
delegated to or debates in a consolidate), a record (right after a parallel),
or unknown (the entry, or a runnable nothing places: the caller decides).
A runnable used in several places has one `Use` per place, so a template is
checked against each input it will really see.
"""

from __future__ import annotations

from dataclasses import dataclass

from plait.core.graph import ChainNode, Edge, ParallelNode
from plait.core.source import Span

from ..graph import AgentGraph

__all__ = ["Shape", "Use", "describe", "inputs", "output_shape", "show"]


@dataclass(frozen=True, slots=True)
class Shape:
    kind: str  # "text", "record" or "unknown"
    #: The runnable whose output this is (a parallel's id for records).
    producer: str | None = None


UNKNOWN = Shape("unknown")


@dataclass(frozen=True, slots=True)
class Use:
    shape: Shape
    #: Where the runnable is placed to receive this input.
    span: Span | None = None
    #: How it got there, worded by `describe` only when a finding needs it:
    #: ("follows", element, before, chain), ("branch", branch, outer note) or (verb, target, source).
    note: tuple = ()


def describe(graph: AgentGraph, note: tuple) -> str:
    branches = []
    while note and note[0] == "branch":  # parallels nest deeply: unwrap in a loop
        branches.append(note[1])
        note = note[2]
    if not note:
        text = ""
    elif note[0] == "follows":
        _, element, before, chain = note
        text = f"`{show(graph, element)}` follows `{show(graph, before)}` in chain `{chain}`"
    else:
        verb, target, source = note
        text = f"`{target}` {verb} `{source}`"
    return text + "".join(f"; `{b}` is a branch of it" for b in reversed(branches))


def show(graph: AgentGraph, node: str) -> str:
    """How a node is written in the spec: inline parallels as `parallel(a, b)`."""
    record = graph.node(node)
    if "/" in node and isinstance(record, ParallelNode):
        return "parallel(" + ", ".join(record.branches) + ")"
    return node


def output_shape(graph: AgentGraph, node: str) -> Shape:
    # A chain's output is its last element's; followed in a loop, since chains nest deeply.
    seen: set[str] = set()
    data = graph.node(node)
    while isinstance(data, ChainNode):
        elements = data.elements
        # A chain containing itself is reported elsewhere; its output is then unknowable.
        if not elements or node in seen:
            return UNKNOWN
        seen.add(node)
        node = elements[-1]
        data = graph.node(node)
    return Shape("record", node) if isinstance(data, ParallelNode) else Shape("text", node)


def inputs(graph: AgentGraph) -> dict[str, list[Use]]:
    """Runnable id → the distinct inputs it receives; runnables placed nowhere get none."""
    uses: dict[str, list[Use]] = {}
    visited: set[tuple[str, Shape]] = set()
    # One walk over the edges (large specs have many), sorted by what this needs.
    element_spans: dict[tuple[str, int], Span | None] = {}
    contained: set[str] = set()
    text_inputs: list[Edge] = []
    for edge in graph.edges():
        kind = edge.kind
        if kind == "next" and edge.chain is not None:
            element_spans[edge.chain, edge.index] = edge.span  # type: ignore[index]
            contained.add(edge.target)
        elif kind == "branch":
            contained.add(edge.target)
        elif kind in ("delegates", "participant", "judge"):
            text_inputs.append(edge)

    def visit(start: str, first: Use) -> None:
        # An explicit stack: chains of chains can nest deeper than Python recursion.
        stack = [(start, first)]
        while stack:
            node, use = stack.pop()
            if (node, use.shape) in visited or node not in graph:
                continue
            visited.add((node, use.shape))
            uses.setdefault(node, []).append(use)
            data = graph.node(node)
            found: list[tuple[str, Use]] = []
            if isinstance(data, ChainNode):
                elements = data.elements
                for index, element in enumerate(elements):
                    if index == 0:
                        found.append((element, use))
                        continue
                    before = elements[index - 1]
                    note = ("follows", element, before, node)
                    found.append((element, Use(output_shape(graph, before), element_spans.get((node, index)), note)))
            elif isinstance(data, ParallelNode):
                for branch in data.branches:
                    found.append((branch, Use(use.shape, use.span, ("branch", branch, use.note) if use.note else ())))
            stack.extend(reversed(found))

    for node in graph.runnables():
        if node not in contained:
            visit(node, Use(UNKNOWN))
    for edge in text_inputs:
        if graph.node(edge.target).kind == "agent":
            how = {"delegates": "delegated to by", "participant": "debates in", "judge": "judges"}[edge.kind]
            visit(edge.target, Use(Shape("text", edge.source), edge.span, (how, edge.target, edge.source)))
    # Chains that contain each other (an error of its own) have no outer root: start inside.
    for node in graph.runnables():
        if node not in uses:
            visit(node, Use(UNKNOWN))
    return uses
