"""AgentGraph + RenderOptions → Scene: exactly the nodes, edges and clusters a picture shows.

Every decision about *what* is drawn lives here (subsetting by entry,
folding models/tools into labels, clusters, expanded turns); the DOT and
Mermaid builders only spell the scene. Everything is kept in declaration
order (lists and dicts, never sets) so output is byte-identical across runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .expand import turn_scene
from .labels import edge_label, node_lines

__all__ = ["HIDEABLE", "Cluster", "RenderOptions", "Scene", "SceneEdge", "SceneNode", "SceneError", "build_scene"]

#: `--hide` word → node kind folded into labels.
HIDEABLE = {"models": "model", "tools": "tool"}
#: Above this many runnables, models and tools are folded unless asked for: a few shared
#: models with hundreds of edges each make the picture unreadable and Graphviz take minutes.
LARGE = 150
CONTAINERS = ("chain", "parallel", "consolidate")
#: Edges that are part of running their source (what --entry follows); `next` is followed per chain.
RUN_EDGES = ("branch", "uses", "delegates", "calls", "fallback", "judge", "participant", "until")


class SceneError(ValueError):
    """A bad option (unknown entry, expand or hide name); the message is one line."""


@dataclass(frozen=True)
class RenderOptions:
    entry: str | None = None
    expand: tuple[str, ...] = ()
    direction: str = "LR"
    #: Words of HIDEABLE; None folds models and tools only in graphs with more than LARGE runnables.
    hide: tuple[str, ...] | None = None


@dataclass
class SceneNode:
    id: str
    kind: str
    lines: list[str]
    #: A tool behind a human approval gate.
    gate: bool = False


@dataclass
class SceneEdge:
    source: str
    target: str
    kind: str
    label: str = ""


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
        stack = [(c, ()) for c in self.clusters]
        while stack:
            cluster, above = stack.pop()
            path = (*above, cluster.id)
            for n in cluster.nodes:
                out[n] = path
            stack.extend((child, path) for child in cluster.children)
        return out


class _Lookup:
    """The graph with `node(id)` as a plain dict lookup.

    networkx builds a view object on every `nx.nodes[...]`; a 1,000-agent
    scene asks for node attributes some ten thousand times.
    """

    def __init__(self, graph: Any) -> None:
        self._graph = graph
        self._attrs = dict(graph.nx.nodes(data=True))

    def node(self, id: str) -> dict:
        return self._attrs[id]

    def __contains__(self, id: str) -> bool:
        return id in self._attrs

    def __getattr__(self, name: str) -> Any:
        return getattr(self._graph, name)


def _one_of(what: str, name: str, valid: list[str]) -> SceneError:
    return SceneError(f"unknown {what} `{name}`; expected one of: {', '.join(valid) or '(none)'}")


def _reachable(graph: Any, start: str) -> dict[str, None]:
    """Nodes that running `start` can touch, in discovery order (a dict as an ordered set)."""
    seen: dict[str, None] = {}
    stack = [start]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen[node] = None
        a = graph.node(node)
        follow = list(a["elements"]) if a["kind"] == "chain" else []
        if a["kind"] == "parallel":
            follow.append(a["join"])
        follow += [v for _, v, d in graph.nx.out_edges(node, data=True) if d["kind"] in RUN_EDGES]
        stack.extend(reversed(follow))
    return seen


def _selection(graph: Any, entry: str | None) -> tuple[list[str], str | None]:
    if entry is None:
        return list(graph.nx.nodes), graph.entry
    runnables = graph.runnables()
    if entry not in runnables:
        raise _one_of("entry", entry, runnables)
    reach = _reachable(graph, entry)
    # Declaration order, not discovery order, so a subset draws like the whole.
    return [n for n in graph.nx.nodes if n in reach], entry


def _members(graph: Any, container: str) -> list[str]:
    a = graph.node(container)
    if a["kind"] == "chain":
        return list(a["elements"])
    if a["kind"] == "parallel":
        return [*a["branches"], a["join"]]
    judge = [a["judge"]] if a["judge"] in graph and graph.node(a["judge"])["kind"] == "agent" else []
    return [*a["agents"], *judge]


def _parent(owner: dict[str, str], container: str) -> str | None:
    """The container holding `container`; None at the top or (in a bad graph) on a containment cycle."""
    seen, up = {container}, owner.get(container)
    while up is not None:
        if up in seen:
            return None
        seen.add(up)
        up = owner.get(up)
    return owner.get(container)


def _clusters(graph: Any, shown: dict[str, None]) -> list[Cluster]:
    containers = [n for n in shown if graph.node(n)["kind"] in CONTAINERS]
    owner: dict[str, str] = {}
    for c in containers:
        for m in _members(graph, c):
            if m in shown and m != c and m not in owner:
                owner[m] = c
    clusters = {}
    for c in containers:
        a = graph.node(c)
        title = {"chain": f"chain {c}", "parallel": "parallel" if "/" in c else f"parallel {c}", "consolidate": f"consolidate {c}"}[a["kind"]]
        clusters[c] = Cluster(f"cluster:{c}", a["kind"], title, [c])
    for m, c in owner.items():
        if m not in clusters:
            clusters[c].nodes.append(m)
    roots = []
    for c in containers:
        parent = _parent(owner, c)
        (clusters[parent].children if parent else roots).append(clusters[c])
    order = {n: i for i, n in enumerate(shown)}
    for cluster in clusters.values():
        cluster.nodes.sort(key=order.__getitem__)
    return roots


def _last(graph: Any, node: str) -> str:
    """Where a runnable's output leaves it in the picture: a chain's last element, a parallel's join."""
    seen = set()
    while node not in seen:
        seen.add(node)
        a = graph.node(node)
        if a["kind"] == "chain" and a["elements"]:
            node = a["elements"][-1]
        elif a["kind"] == "parallel":
            return a["join"]
        else:
            break
    return node


def _exit_hints(graph: Any, shown: dict[str, None], edges: list[SceneEdge]) -> list[SceneEdge]:
    """Invisible `layout` edges that place `end` after a chain's last element, not beside the chain's head."""
    hints = []
    for e in edges:
        if e.kind == "next" and e.target == "@exit":
            last = _last(graph, e.source)
            if last != e.source and last in shown:
                hints.append(SceneEdge(last, e.target, "layout"))
    return hints


def _hidden(graph: Any, options: RenderOptions) -> tuple[frozenset[str], str]:
    if options.hide is None:
        count = len(graph.runnables())
        if count <= LARGE:
            return frozenset(), ""
        return frozenset(HIDEABLE), f"{count} runnables: models and tools are folded into labels (--hide none draws them)"
    for word in options.hide:
        if word not in HIDEABLE and word != "none":
            raise _one_of("--hide value", word, [*HIDEABLE, "none"])
    return frozenset(w for w in options.hide if w != "none"), ""


def build_scene(graph: Any, options: RenderOptions = RenderOptions()) -> Scene:
    if options.direction not in ("LR", "TB"):
        raise _one_of("direction", options.direction, ["LR", "TB"])
    graph = _Lookup(graph)
    hidden, note = _hidden(graph, options)
    hidden_kinds = {HIDEABLE[w] for w in hidden}
    selected, entry = _selection(graph, options.entry)
    shown = {n: None for n in selected if graph.node(n)["kind"] not in hidden_kinds}
    if options.entry is not None:
        shown = {n: None for n in shown if graph.node(n)["kind"] not in ("entry", "exit")}

    nodes = []
    for n in shown:
        a = graph.node(n)
        gate = a["kind"] == "tool" and bool(a["approval"])
        nodes.append(SceneNode(n, a["kind"], node_lines(graph, n, hidden), gate))

    edges = []
    for u, v, d in graph.nx.edges(data=True):
        if u not in shown or v not in shown:
            continue
        if d["kind"] == "next" and d.get("chain") is not None and d["chain"] not in shown:
            continue
        edges.append(SceneEdge(u, v, d["kind"], edge_label(graph, u, v, d)))

    clusters = _clusters(graph, shown)
    edges += _exit_hints(graph, shown, edges)
    if options.entry is not None:
        # Running with --entry starts and ends at that runnable; draw the run it names.
        nodes = [SceneNode("@entry", "entry", ["start"]), *nodes, SceneNode("@exit", "exit", ["end"])]
        edges = [SceneEdge("@entry", entry, "next", "input"), *edges, SceneEdge(entry, "@exit", "next", "output")]

    agents = [n for n in shown if graph.node(n)["kind"] == "agent"]
    for agent in dict.fromkeys(options.expand):
        if agent not in agents:
            raise _one_of("agent to expand", agent, agents)
        turn_nodes, turn_edges = turn_scene(graph, agent)
        nodes += [SceneNode(i, k, lines) for i, k, lines in turn_nodes]
        edges += [SceneEdge(*e) for e in turn_edges]
        clusters.append(Cluster(f"cluster:{agent}@turn", "turn", f"one turn of {agent}", [i for i, _, _ in turn_nodes]))
    return Scene(options.direction, nodes, edges, clusters, note)
