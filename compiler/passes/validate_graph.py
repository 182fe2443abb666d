"""AgentGraph → shape diagnostics: delegation cycles, chains containing
themselves, `until` contracts and consolidate arity, found by graph algorithms."""

from __future__ import annotations

from itertools import islice

import networkx as nx

from plait.dsl.diagnostics import Label

from ..codes import make
from ..context import CompileContext


#: Cycles enumerated at most: a dense graph has exponentially many (12 agents
#: that all delegate to each other have ~10^8), and 20 are reported anyway.
MAX_CYCLES = 100


def _cycles(graph: nx.DiGraph) -> list[list[str]]:
    # simple_cycles lists each cycle once per rotation-free form; sort for stable output.
    found = list(islice(nx.simple_cycles(graph), MAX_CYCLES))
    return sorted((c[c.index(min(c)) :] + c[: c.index(min(c))] for c in found), key=lambda c: (len(c), c))


def validate_graph(ctx: CompileContext) -> None:
    graph = ctx.graph
    report = ctx.diagnostics.append

    delegation = nx.DiGraph()
    for u, v, data in graph.edges_of("delegates"):
        delegation.add_edge(u, v, span=data["span"])
    for cycle in _cycles(delegation)[:20]:
        path = " -> ".join(f"`{n}`" for n in cycle + [cycle[0]])
        first = delegation.edges[cycle[-1], cycle[0]]["span"] if len(cycle) > 1 else delegation.edges[cycle[0], cycle[0]]["span"]
        labels = [Label(delegation.edges[a, b]["span"], f"`{a}` delegates to `{b}`") for a, b in zip(cycle, cycle[1:])]
        report(make("P303", f"delegation cycle: {path}", first, labels=labels,
                    notes=["an agent that can reach itself through `tools` can recurse without end"]))

    containment = nx.DiGraph()
    for node, data in graph.nx.nodes(data=True):
        for child in data.get("elements") or data.get("branches") or ():
            containment.add_edge(node, child)
    spans = {(r.owner, r.target): r.span for r in ctx.references if r.attr in ("elements", "branches")}
    for cycle in _cycles(containment)[:20]:
        owner = next((n for n in cycle if "/" not in n), cycle[0])
        i = cycle.index(owner)
        target = cycle[(i + 1) % len(cycle)]
        span = spans.get((owner, target)) or graph.node(owner)["span"]
        path = " -> ".join(f"`{n}`" for n in cycle[i:] + cycle[:i] + [owner])
        report(make("P304", f"`{owner}` contains itself: {path}", span))

    # Grouped once: scanning every reference per agent was quadratic in large specs.
    until_refs: dict[str, list] = {}
    for ref in ctx.references:
        if ref.attr == "until":
            until_refs.setdefault(ref.owner, []).append(ref)
    for agent in graph.nodes_of("agent"):
        data = graph.node(agent)
        tools = set(data["tools"] or ())
        for ref in until_refs.get(agent, ()):
            if ref.target not in tools:
                report(
                    make(
                        "P301",
                        f"`until` names `{ref.target}`, which agent `{agent}` does not have in `tools`",
                        ref.span,
                        labels=[Label(ctx.spans[agent]["tools"], "the agent's tools")] if "tools" in ctx.spans[agent] else [],
                        notes=["the run can only end on a tool the model can call"],
                    )
                )

    for name in graph.nodes_of("consolidate"):
        agents = ctx.values[name].get("agents") or ()
        if len(agents) < 2 and "agents" in ctx.spans.get(name, {}):
            report(make("P305", f"consolidate `{name}` needs at least two agents, found {len(agents)}",
                        ctx.spans[name]["agents"]))
