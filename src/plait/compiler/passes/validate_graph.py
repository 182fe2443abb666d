"""AgentGraph → shape diagnostics: delegation cycles, runnables containing
themselves, `until` contracts and consolidate arity, found by graph algorithms.

A loop's `back` edge is the one cycle a spec may declare; it is not part of
containment, so every other way back (a chain, route case or loop body that
contains its own container) is still P304."""

from __future__ import annotations

from itertools import islice
from typing import TYPE_CHECKING, Callable

from plait.core.diagnostics import Diagnostic, Label, Severity

from plait.core.codes import declare, make
from plait.core.graph import Edge, Node

from ..context import CompileContext

if TYPE_CHECKING:
    import networkx as nx

# The codes this module raises; their documentation is explain/<code>.md beside it.
P301 = declare("P301", "until-not-a-tool", Severity.ERROR, "`until` names a tool the agent does not have")
P303 = declare("P303", "delegation-cycle", Severity.ERROR, "an agent that can reach itself through `tools`")
P304 = declare("P304", "chain-cycle", Severity.ERROR, "a chain or parallel that contains itself")
P305 = declare("P305", "too-few-agents", Severity.ERROR, "a consolidate with fewer than two agents")


#: Cycles enumerated at most: a dense graph has exponentially many (12 agents
#: that all delegate to each other have ~10^8), and 20 are reported anyway.
MAX_CYCLES = 100


def _has_cycle(edges: list[tuple[str, str]]) -> bool:
    """Whether the directed edges close a cycle: one depth-first walk, no networkx.

    Almost every spec has none, and networkx's import costs more than the rest
    of `plait check`; it is loaded only to enumerate cycles that exist."""
    successors: dict[str, list[str]] = {}
    for u, v in edges:
        successors.setdefault(u, []).append(v)
    state: dict[str, bool] = {}  # True while on the walk's path, False when finished
    for root in successors:
        if root in state:
            continue
        state[root] = True
        path = [(root, iter(successors[root]))]
        while path:
            node, children = path[-1]
            for child in children:
                if state.get(child) is True:
                    return True
                if child not in state:
                    state[child] = True
                    path.append((child, iter(successors.get(child, ()))))
                    break
            else:
                state[node] = False
                path.pop()
    return False


def _cycles(graph: nx.DiGraph) -> list[list[str]]:
    import networkx as nx

    # simple_cycles lists each cycle once per rotation-free form; sort for stable output.
    found = list(islice(nx.simple_cycles(graph), MAX_CYCLES))
    return sorted((c[c.index(min(c)) :] + c[: c.index(min(c))] for c in found), key=lambda c: (len(c), c))


def _members(node: Node) -> tuple[str, ...]:
    """What running `node` runs inside it: a chain's elements, a parallel's branches, a route's cases,
    a loop's or map's body, an agent's hand-off targets. A loop's repetition is its `back` edge, never
    containment, so a loop whose body contains the loop itself is still a cycle here."""
    for attr in ("elements", "branches", "body", "handoff"):
        members = getattr(node, attr, None)
        if members:
            return members
    targets = getattr(node, "targets", None)
    return targets() if targets is not None else ()


def validate_graph(ctx: CompileContext) -> None:
    graph = ctx.graph
    assert graph is not None
    report = ctx.diagnostics.append

    delegates = list(graph.edges("delegates"))
    if _has_cycle([(e.source, e.target) for e in delegates]):
        _delegation_cycles(delegates, report)

    contains = [(node.name, child) for node in graph.nodes() for child in _members(node)]
    if _has_cycle(contains):
        _containment_cycles(ctx, contains, report)

    # Grouped once: scanning every reference per agent was quadratic in large specs.
    until_refs: dict[str, list] = {}
    for ref in ctx.references:
        if ref.attr == "until":
            until_refs.setdefault(ref.owner, []).append(ref)
    for agent in graph.nodes_of("agent"):
        tools = set(graph.node(agent).tools)  # type: ignore[attr-defined]
        for ref in until_refs.get(agent, ()):
            if ref.target not in tools:
                report(
                    make(
                        "P301",
                        f"`until` names `{ref.target}`, which agent `{agent}` does not have in `tools`",
                        ref.span,
                        labels=[Label(ctx.spans[agent]["tools"], "the agent's tools")]
                        if "tools" in ctx.spans[agent]
                        else [],
                        notes=["the run can only end on a tool the model can call"],
                    )
                )

    for name in graph.nodes_of("consolidate"):
        agents = ctx.values[name].get("agents") or ()
        if len(agents) < 2 and "agents" in ctx.spans.get(name, {}):
            report(
                make(
                    "P305",
                    f"consolidate `{name}` needs at least two agents, found {len(agents)}",
                    ctx.spans[name]["agents"],
                )
            )


def _delegation_cycles(delegates: list[Edge], report: Callable[[Diagnostic], None]) -> None:
    import networkx as nx

    delegation = nx.DiGraph()
    for e in delegates:
        delegation.add_edge(e.source, e.target, span=e.span)
    for cycle in _cycles(delegation)[:20]:
        path = " -> ".join(f"`{n}`" for n in cycle + [cycle[0]])
        first = delegation.edges[cycle[-1], cycle[0]]["span"]  # the edge closing the cycle (a self-loop for one agent)
        labels = [Label(delegation.edges[a, b]["span"], f"`{a}` delegates to `{b}`") for a, b in zip(cycle, cycle[1:])]
        report(
            make(
                "P303",
                f"delegation cycle: {path}",
                first,
                labels=labels,
                notes=["an agent that can reach itself through `tools` can recurse without end"],
            )
        )


def _containment_cycles(
    ctx: CompileContext, contains: list[tuple[str, str]], report: Callable[[Diagnostic], None]
) -> None:
    import networkx as nx

    graph = ctx.graph
    assert graph is not None
    containment = nx.DiGraph()
    containment.add_edges_from(contains)
    spans = {(r.owner, r.target): r.span for r in ctx.references if r.attr in ("elements", "branches", "body", "cases")}
    for cycle in _cycles(containment)[:20]:
        owner = next((n for n in cycle if "/" not in n), cycle[0])
        i = cycle.index(owner)
        target = cycle[(i + 1) % len(cycle)]
        span = spans.get((owner, target)) or graph.node(owner).span
        assert span is not None  # a generated node's only container is its declared owner, so a cycle has one
        path = " -> ".join(f"`{n}`" for n in cycle[i:] + cycle[:i] + [owner])
        report(make("P304", f"`{owner}` contains itself: {path}", span))
