"""AgentGraph + RenderOptions → Scene: exactly the nodes, edges and clusters a picture shows.

Every decision about *what* is drawn lives here (subsetting by entry,
folding models/tools into labels, clusters, expanded turns); the DOT and
Mermaid builders only spell the scene. Everything is kept in declaration
order (lists and dicts, never sets) so output is byte-identical across runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from plait.core import graph as g
from plait.core.vocab import RENDER_DIRECTIONS

from ..graph import AgentGraph
from .expand import turn_scene
from .labels import edge_label, node_lines, run_input
from .layout import choose_direction

__all__ = [
    "DIRECTIONS",
    "HIDEABLE",
    "Cluster",
    "RenderOptions",
    "Scene",
    "SceneEdge",
    "SceneNode",
    "SceneError",
    "build_scene",
]

#: `--hide` word → node kind folded into labels.
HIDEABLE = {"models": "model", "tools": "tool"}
#: Above this many runnables the picture says that models and tools are folded: a few shared
#: models with hundreds of edges each make the picture unreadable and Graphviz take minutes.
LARGE = 150
#: `--direction` words: "auto" picks LR or TB by the graph's shape (layout.py).
DIRECTIONS = RENDER_DIRECTIONS
#: Kinds drawn as a cluster around what they run.
CONTAINERS = ("chain", "parallel", "consolidate", "route", "loop", "map")
#: Edges that are part of running their source (what --entry follows); `next` is followed per chain.
FOLLOWED: tuple[str, ...] = ("branch", "uses", "delegates", "calls", "fallback", "judge", "participant", "until")
FOLLOWED += ("case", "body", "each", "thread", "handoff")
#: Node kinds never drawn as nodes: the declared input is written on `start`, state is not a step.
UNDRAWN = ("input", "state")


class SceneError(ValueError):
    """A bad option (unknown entry, expand or hide name); the message is one line."""


@dataclass(frozen=True)
class RenderOptions:
    entry: str | None = None
    expand: tuple[str, ...] = ()
    direction: str = "auto"
    #: Words of HIDEABLE ("none": draw them all); None folds models and tools into the labels of what uses them,
    #: since their dotted edges cross everything else (`--hide none` draws them).
    hide: tuple[str, ...] | None = None
    #: A coverage report (compiler/coverage.py): what no run reached is marked (`plait render --coverage FILE`).
    coverage: Any = None
    #: The static cost bound (compiler/bounds.py: a list of EntryBound): each runnable's worst case in its label.
    cost: Any = None


@dataclass
class SceneNode:
    id: str
    kind: str
    lines: list[str]
    #: A tool behind a human approval gate.
    gate: bool = False
    #: Coverage: "missed" (no run reached it) or "partial" (reached, but not every case, exit or answer of it).
    missed: str | None = None


@dataclass
class SceneEdge:
    source: str
    target: str
    kind: str
    label: str = ""
    #: Coverage: no run took this edge (a route case, a fallback).
    missed: bool = False


@dataclass
class Cluster:
    id: str
    kind: str
    title: str
    nodes: list[str] = field(default_factory=list)
    children: list["Cluster"] = field(default_factory=list)


@dataclass
class Scene:
    direction: str
    nodes: list[SceneNode]
    edges: list[SceneEdge]
    #: Top-level clusters; a node appears in at most one cluster.
    clusters: list[Cluster]
    #: A line the picture carries about what it left out, or "".
    note: str = ""

    def enclosing(self) -> dict[str, tuple[str, ...]]:
        """node id → ids of the clusters holding it, outermost first."""
        out: dict[str, tuple[str, ...]] = {}
        stack: list[tuple[Cluster, tuple[str, ...]]] = [(c, ()) for c in self.clusters]
        while stack:
            cluster, above = stack.pop()
            path = (*above, cluster.id)
            for n in cluster.nodes:
                out[n] = path
            stack.extend((child, path) for child in cluster.children)
        return out


def _one_of(what: str, name: str, valid: list[str]) -> SceneError:
    return SceneError(f"unknown {what} `{name}`; expected one of: {', '.join(valid) or '(none)'}")


def _reachable(graph: AgentGraph, start: str) -> dict[str, None]:
    """Nodes that running `start` can touch, in discovery order (a dict as an ordered set)."""
    seen: dict[str, None] = {}
    stack = [start]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen[node] = None
        a = graph.node(node)
        follow = list(a.elements) if isinstance(a, g.ChainNode) else []
        if isinstance(a, g.ParallelNode):
            follow.append(a.join)
        follow += [e.target for e in graph.out_edges(node, *FOLLOWED)]
        stack.extend(reversed(follow))
    return seen


def _selection(graph: AgentGraph, entry: str | None) -> tuple[list[str], str | None]:
    if entry is None:
        return [n.name for n in graph.nodes()], graph.entry
    runnables = graph.runnables()
    if entry not in runnables:
        raise _one_of("entry", entry, runnables)
    reach = _reachable(graph, entry)
    # Declaration order, not discovery order, so a subset draws like the whole.
    return [n.name for n in graph.nodes() if n.name in reach], entry


def _members(graph: AgentGraph, container: str) -> list[str]:
    a = graph.node(container)
    if isinstance(a, g.ChainNode):
        return list(a.elements)
    if isinstance(a, g.ParallelNode):
        return [*a.branches, a.join]
    if isinstance(a, g.LoopNode | g.MapNode):
        return list(a.body)
    if isinstance(a, g.RouteNode):
        return list(a.targets())
    assert isinstance(a, g.ConsolidateNode)
    judge = [a.judge] if isinstance(graph.get(a.judge), g.AgentNode) else []
    return [*a.agents, *judge]


def _parent(owner: dict[str, str], container: str) -> str | None:
    """The container holding `container`; None at the top or (in a bad graph) on a containment cycle."""
    seen, up = {container}, owner.get(container)
    while up is not None:
        if up in seen:
            return None
        seen.add(up)
        up = owner.get(up)
    return owner.get(container)


def _clusters(graph: AgentGraph, shown: dict[str, None]) -> list[Cluster]:
    containers = [n for n in shown if graph.node(n).kind in CONTAINERS]
    owner: dict[str, str] = {}
    for c in containers:
        for m in _members(graph, c):
            if m in shown and m != c and m not in owner:
                owner[m] = c
    clusters = {}
    for c in containers:
        kind = graph.node(c).kind
        title = "parallel" if kind == "parallel" and "/" in c else f"{kind} {c}"
        clusters[c] = Cluster(f"cluster:{c}", kind, title, [c])
    for m, c in owner.items():
        if m not in clusters:
            clusters[c].nodes.append(m)
    roots: list[Cluster] = []
    for c in containers:
        parent = _parent(owner, c)
        (clusters[parent].children if parent else roots).append(clusters[c])
    order = {n: i for i, n in enumerate(shown)}
    for cluster in clusters.values():
        cluster.nodes.sort(key=order.__getitem__)
    return roots


def _last(graph: AgentGraph, node: str) -> str:
    """Where a runnable's output leaves it in the picture: a chain's last element, a parallel's join."""
    seen = set()
    while node not in seen:
        seen.add(node)
        a = graph.node(node)
        if isinstance(a, g.ChainNode) and a.elements:
            node = a.elements[-1]
        elif isinstance(a, g.ParallelNode):
            return a.join
        else:
            break
    return node


def _after(graph: AgentGraph, loop: str, shown: dict[str, None]) -> str:
    """Where a `break` out of `loop` goes on in the picture: what follows the loop where it runs (its one shown
    successor), else the loop's own node, which its outgoing edges leave from."""
    following = {e.target for e in graph.out_edges(loop, "next") if e.target in shown}
    return following.pop() if len(following) == 1 else loop


def _exit_hints(graph: AgentGraph, shown: dict[str, None], edges: list[SceneEdge]) -> list[SceneEdge]:
    """Invisible `layout` edges that place `end` after a chain's last element, not beside the chain's head."""
    hints = []
    for e in edges:
        if e.kind == "next" and e.target == "@exit":
            last = _last(graph, e.source)
            if last != e.source and last in shown:
                hints.append(SceneEdge(last, e.target, "layout"))
    return hints


def _hidden(graph: AgentGraph, options: RenderOptions) -> tuple[frozenset[str], str]:
    if options.hide is None:
        count = len(graph.runnables())
        note = f"{count} runnables: models and tools are folded into labels (--hide none draws them)"
        return frozenset(HIDEABLE), note if count > LARGE else ""
    for word in options.hide:
        if word not in HIDEABLE and word != "none":
            raise _one_of("--hide value", word, [*HIDEABLE, "none"])
    return frozenset(w for w in options.hide if w != "none"), ""


def build_scene(graph: AgentGraph, options: RenderOptions = RenderOptions()) -> Scene:
    if options.direction not in DIRECTIONS:
        raise _one_of("direction", options.direction, list(DIRECTIONS))
    graph = graph.protected()  # a picture never shows a secret's value
    hidden, note = _hidden(graph, options)
    hidden_kinds = {HIDEABLE[w] for w in hidden}
    selected, entry = _selection(graph, options.entry)
    hidden_kinds |= set(UNDRAWN)
    shown = {n: None for n in selected if graph.node(n).kind not in hidden_kinds}
    if options.entry is not None:
        shown = {n: None for n in shown if graph.node(n).kind not in ("entry", "exit")}

    nodes = []
    for n in shown:
        a = graph.node(n)
        gate = isinstance(a, g.ToolNode) and a.approval is not False  # `required`, or a condition
        nodes.append(SceneNode(n, a.kind, node_lines(graph, n, hidden), gate))

    edges = []
    for e in graph.edges():
        if e.source not in shown or e.target not in shown:
            continue
        if e.kind in ("next", "body", "each") and e.chain is not None and e.chain not in shown:
            continue
        target = _after(graph, e.target, shown) if e.kind == "break" else e.target
        edges.append(SceneEdge(e.source, target, e.kind, edge_label(graph, e)))

    clusters = _clusters(graph, shown)
    edges += _exit_hints(graph, shown, edges)
    if entry is not None and options.entry is not None:
        # Running with --entry starts and ends at that runnable; draw the run it names.
        nodes = [SceneNode("@entry", "entry", ["start"]), *nodes, SceneNode("@exit", "exit", ["end"])]
        edges = [
            SceneEdge("@entry", entry, "next", run_input(graph)),
            *edges,
            SceneEdge(entry, "@exit", "next", "output"),
        ]

    agents = [n for n in shown if graph.node(n).kind == "agent"]
    for agent in dict.fromkeys(options.expand):
        if agent not in agents:
            raise _one_of("agent to expand", agent, agents)
        turn_nodes, turn_edges = turn_scene(graph, agent)
        nodes += [SceneNode(i, k, lines) for i, k, lines in turn_nodes]
        edges += [SceneEdge(*e) for e in turn_edges]
        clusters.append(Cluster(f"cluster:{agent}@turn", "turn", f"one turn of {agent}", [i for i, _, _ in turn_nodes]))
    direction = choose_direction(nodes, edges) if options.direction == "auto" else options.direction
    scene = Scene(direction, nodes, edges, clusters, note)
    if options.coverage is not None:
        from .coverage_marks import mark

        mark(scene, options.coverage)
    if options.cost is not None:
        from .cost_marks import mark as mark_cost

        mark_cost(scene, options.cost)
    return scene
