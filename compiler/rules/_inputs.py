"""AgentGraph → what each runnable receives as `{{input}}`, at every place it is used.

A runnable's input is text (after an agent, step or consolidate, or when it is
delegated to or debates in a consolidate), a record (right after a parallel),
or unknown (the entry, or a runnable nothing places: the caller decides).
A runnable used in several places has one `Use` per place, so a template is
checked against each input it will really see.
"""

from __future__ import annotations

from dataclasses import dataclass

from plait.dsl.source import Span

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
    if not note:
        return ""
    if note[0] == "follows":
        _, element, before, chain = note
        return f"`{show(graph, element)}` follows `{show(graph, before)}` in chain `{chain}`"
    if note[0] == "branch":
        _, branch, outer = note
        return f"{describe(graph, outer)}; `{branch}` is a branch of it"
    verb, target, source = note
    return f"`{target}` {verb} `{source}`"


def show(graph: AgentGraph, node: str) -> str:
    """How a node is written in the spec: inline parallels as `parallel(a, b)`."""
    if "/" in node and graph.node(node)["kind"] == "parallel":
        return "parallel(" + ", ".join(graph.node(node)["branches"]) + ")"
    return node


def output_shape(graph: AgentGraph, node: str, seen: frozenset[str] = frozenset()) -> Shape:
    data = graph.node(node)
    kind = data["kind"]
    if kind == "parallel":
        return Shape("record", node)
    if kind == "chain":
        elements = data["elements"] or ()
        # A chain containing itself is reported elsewhere; its output is then unknowable.
        if not elements or node in seen:
            return UNKNOWN
        return output_shape(graph, elements[-1], seen | {node})
    return Shape("text", node)


def inputs(graph: AgentGraph) -> dict[str, list[Use]]:
    """Runnable id → the distinct inputs it receives; runnables placed nowhere get none."""
    uses: dict[str, list[Use]] = {}
    visited: set[tuple[str, Shape]] = set()
    # One walk over the edges (large specs have many), sorted by what this needs.
    element_spans: dict[tuple[str, int], Span | None] = {}
    contained: set[str] = set()
    text_inputs: list[tuple[str, str, dict]] = []
    for source, target, data in graph.nx.edges(data=True):
        kind = data["kind"]
        if kind == "next" and data["chain"] is not None:
            element_spans[data["chain"], data["index"]] = data["span"]
            contained.add(target)
        elif kind == "branch":
            contained.add(target)
        elif kind in ("delegates", "participant", "judge"):
            text_inputs.append((source, target, data))

    def visit(node: str, use: Use) -> None:
        if (node, use.shape) in visited or node not in graph:
            return
        visited.add((node, use.shape))
        uses.setdefault(node, []).append(use)
        data = graph.node(node)
        if data["kind"] == "chain":
            elements = data["elements"] or ()
            for index, element in enumerate(elements):
                if index == 0:
                    visit(element, use)
                    continue
                before = elements[index - 1]
                note = ("follows", element, before, node)
                visit(element, Use(output_shape(graph, before), element_spans.get((node, index)), note))
        elif data["kind"] == "parallel":
            for branch in data["branches"] or ():
                visit(branch, Use(use.shape, use.span, ("branch", branch, use.note) if use.note else ()))

    for node in graph.runnables():
        if node not in contained:
            visit(node, Use(UNKNOWN))
    for source, target, data in text_inputs:
        if graph.node(target)["kind"] == "agent":
            how = {"delegates": "delegated to by", "participant": "debates in", "judge": "judges"}[data["kind"]]
            visit(target, Use(Shape("text", source), data["span"], (how, target, source)))
    # Chains that contain each other (an error of its own) have no outer root: start inside.
    for node in graph.runnables():
        if node not in uses:
            visit(node, Use(UNKNOWN))
    return uses
