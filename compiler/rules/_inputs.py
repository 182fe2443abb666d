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

__all__ = ["Shape", "Use", "inputs", "output_shape", "show"]


@dataclass(frozen=True, slots=True)
class Shape:
    kind: str  # "text", "record" or "unknown"
    #: The runnable whose output this is (a parallel's id for records).
    producer: str | None = None


UNKNOWN = Shape("unknown")


@dataclass(frozen=True, slots=True)
class Use:
    shape: Shape
    #: Where the runnable is placed to receive this input, and how to say so.
    span: Span | None = None
    where: str = ""


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
    element_spans = {(d["chain"], d["index"]): d["span"] for _, _, d in graph.edges_of("next") if d["chain"]}

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
                where = f"`{show(graph, element)}` follows `{show(graph, before)}` in chain `{node}`"
                visit(element, Use(output_shape(graph, before), element_spans.get((node, index)), where))
        elif data["kind"] == "parallel":
            for branch in data["branches"] or ():
                where = f"{use.where}; `{branch}` is a branch of it" if use.where else ""
                visit(branch, Use(use.shape, use.span, where))

    contained = {v for _, v, _ in graph.edges_of("branch")} | {
        v for _, v, d in graph.edges_of("next") if d["chain"] is not None
    }
    for node in graph.runnables():
        if node not in contained:
            visit(node, Use(UNKNOWN))
    for source, target, data in graph.edges_of("delegates", "participant", "judge"):
        if graph.node(target)["kind"] == "agent":
            how = {"delegates": "delegated to by", "participant": "debates in", "judge": "judges"}[data["kind"]]
            visit(target, Use(Shape("text", source), data["span"], f"`{target}` {how} `{source}`"))
    # Chains that contain each other (an error of its own) have no outer root: start inside.
    for node in graph.runnables():
        if node not in uses:
            visit(node, Use(UNKNOWN))
    return uses
