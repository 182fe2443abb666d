"""One agent → its turn drawn as the step pipeline, with every way a turn can end as a labelled edge.

The step names are `core.vocab.TURN_STEP_NAMES`, the ones src/plait/runtime/pipeline.py
runs; rendering never imports the runtime.
"""

from __future__ import annotations

from plait.core import graph as g
from plait.core.conditions import condition_text
from plait.core.vocab import TURN_STEP_NAMES

from ..graph import AgentGraph
from .labels import is_gated, until_text

__all__ = ["TURN_STEP_NAMES", "turn_scene"]

#: (runtime step name, what the box says).
TURN_STEPS: tuple[tuple[str, str], ...] = tuple((name, name.replace("_", " ")) for name in TURN_STEP_NAMES)

#: Where a turn can end: returns an answer, stops for a human, or fails.
EXITS = (("returns", "returns output"), ("human", "stops for a human"), ("fails", "fails"))


def _gated(graph: AgentGraph, a: g.AgentNode) -> list[str]:
    """Its tools that wait for a person: always, or (`TOOL when ...`) when their condition holds."""
    gated = []
    for t in a.tools:
        node = graph.node(t)
        if not isinstance(node, g.ToolNode):
            continue
        if is_gated(graph, a, t):
            gated.append(t)
        elif not isinstance(node.approval, bool):
            gated.append(f"{t} when {condition_text(node.approval)}")
    return gated


def turn_scene(
    graph: AgentGraph, agent: str
) -> tuple[list[tuple[str, str, list[str]]], list[tuple[str, str, str, str]]]:
    """(nodes as (id, kind, lines), edges as (source, target, kind, label)) for `agent`'s turn."""
    a = graph.node(agent)
    assert isinstance(a, g.AgentNode)
    gated = _gated(graph, a)
    extra = {
        "check_budget": f"max_steps {a.max_steps}",
        "call_model": " → ".join([a.model, *a.fallback]),
        "check_interrupts": "approval " + ", ".join(gated) if gated else "no approval gates",
        "check_until": until_text(a) if a.until else "no until",
        "loop_boundary": "tool results waiting?",
    }
    sid = {name: f"{agent}@turn/{name}" for name, _ in TURN_STEPS}
    xid = {name: f"{agent}@turn/{name}" for name, _ in EXITS}
    nodes = [(sid[name], "turn_step", [text, extra[name]] if extra.get(name) else [text]) for name, text in TURN_STEPS]
    nodes += [(xid[name], "turn_exit", [text]) for name, text in EXITS]

    edges = [(agent, sid["check_budget"], "turn", "each turn")]
    for (step, _), (following, _) in zip(TURN_STEPS, TURN_STEPS[1:]):
        edges.append((sid[step], sid[following], "turn", ""))
    edges.append((sid["loop_boundary"], sid["check_budget"], "loop", "loop"))
    if a.retry_malformed:
        # A malformed call is re-asked as a new turn, so it counts against max_steps.
        edges.append((sid["call_model"], sid["check_budget"], "loop", f"retry malformed (≤{a.retry_malformed})"))
    edges += [
        (sid["check_budget"], xid["returns"], "stop", f"max steps ({a.max_steps})"),
        (sid["check_budget"], xid["human"], "stop", "pause"),
        (sid["call_model"], xid["fails"], "stop", "error"),
        (sid["call_model"], xid["returns"], "stop", "done (truncated)"),
    ]
    # Only drawn when they can happen: a gate to stop at, a delegate that may stop for a human.
    if gated:
        edges.append((sid["check_interrupts"], xid["human"], "stop", "interrupt"))
    if any(graph.node(t).kind == "agent" for t in a.tools):
        edges.append((sid["run_tools"], xid["human"], "stop", "interrupt (delegate)"))
    if a.until:
        edges.append((sid["check_until"], xid["returns"], "stop", "until satisfied"))
        edges.append((sid["loop_boundary"], xid["fails"], "stop", "error: until not called"))
    else:
        edges.append((sid["loop_boundary"], xid["returns"], "stop", "done"))
    return nodes, edges
