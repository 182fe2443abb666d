"""Checked declarations → AgentGraph: typed nodes and edges over a networkx MultiDiGraph.

The contract (node kinds, attributes, edges, JSON) is documented in
docs/graph.md; renderers, `plait graph`, `plait diff` and the runtime read
only this object.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from plait.core.source import Span

from .schema import RUNNABLE_KINDS

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["AgentGraph", "GRAPH_JSON_VERSION", "span_json"]

GRAPH_JSON_VERSION = 1


def span_json(span: Span | None, base_dir: Path | None) -> dict[str, Any] | None:
    if span is None:
        return None
    file = span.file
    if base_dir is not None and file not in ("<string>", ""):
        try:
            file = str(Path(file).resolve().relative_to(base_dir))
        except ValueError:
            pass
    return {
        "file": file,
        "line": span.line,
        "column": span.column,
        "end_line": span.end_line,
        "end_column": span.end_column,
    }


def _jsonable(value: Any, base: str | None) -> Any:
    if isinstance(value, tuple | list):
        return [_jsonable(v, base) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v, base) for k, v in value.items()}
    if base and isinstance(value, str) and value.startswith(base):
        # Absolute paths (script files, python tool folders) differ per machine.
        return value[len(base) :].lstrip("/\\") or "."
    return value


class AgentGraph:
    """A compiled spec. Build with `add_node`/`add_edge` in declaration order; then read.

    `.nx` is the networkx MultiDiGraph. Importing networkx costs more than the
    rest of `plait check`, so until `.nx` is first read the nodes and edges live
    in dicts shaped like MultiDiGraph's own (`_node`, `_succ`); the first read
    builds the MultiDiGraph in the same order and from then on these names are
    its dicts, so every method reads one source of truth. Attribute dicts
    returned by `node()` before that moment are copied, not shared.
    """

    def __init__(self, base_dir: Path | None = None) -> None:
        self.base_dir = base_dir
        self.entry: str | None = None
        self._nx: nx.MultiDiGraph | None = None
        self._node: dict[str, dict[str, Any]] = {}
        self._succ: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
        # Edges in the order added, to rebuild the MultiDiGraph exactly (predecessor order too).
        self._edge_log: list[tuple[str, str, str]] = []
        # Edge keys count edges; len(nx.edges) would walk them all on every add.
        self._edges_added = 0
        # Every node of one file resolves the same path; resolve() is a syscall each time.
        self._resolved: dict[str, str] = {}

    @property
    def nx(self) -> "nx.MultiDiGraph":
        if self._nx is None:
            import networkx

            graph = networkx.MultiDiGraph()
            graph.add_nodes_from(self._node.items())
            graph.add_edges_from((u, v, key, self._succ[u][v][key]) for u, v, key in self._edge_log)
            self._nx, self._node, self._succ, self._edge_log = graph, graph._node, graph._succ, []
        return self._nx

    # --- building -----------------------------------------------------------------

    def add_node(self, id: str, kind: str, span: Span | None, **attrs: Any) -> None:
        file = None
        if span and span.file != "<string>":
            file = self._resolved.get(span.file)
            if file is None:
                file = self._resolved[span.file] = str(Path(span.file).resolve())
        attrs = {"kind": kind, "name": id, "span": span, "file": file, **attrs}
        if self._nx is not None:
            self._nx.add_node(id, **attrs)
        elif id in self._node:
            self._node[id].update(attrs)
        else:
            self._node[id], self._succ[id] = attrs, {}

    def add_edge(self, source: str, target: str, kind: str, span: Span | None, **attrs: Any) -> None:
        key = f"{kind}:{self._edges_added}"
        self._edges_added += 1
        data = {"kind": kind, "span": span, **attrs}
        if self._nx is not None:
            self._nx.add_edge(source, target, key=key, **data)
            return
        for end in (source, target):  # as networkx does, an edge adds missing nodes
            if end not in self._node:
                self._node[end], self._succ[end] = {}, {}
        self._succ[source].setdefault(target, {})[key] = data
        self._edge_log.append((source, target, key))

    # --- reading ------------------------------------------------------------------

    def node(self, id: str) -> dict[str, Any]:
        return self._node[id]

    def __contains__(self, id: str) -> bool:
        return id in self._node

    def node_items(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """(id, attributes) in declaration order, as `nx.nodes(data=True)`."""
        return iter(self._node.items())

    def edges(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """(source, target, attributes) in the order of `nx.edges(data=True)`, without importing networkx."""
        for u, targets in self._succ.items():
            for v, keyed in targets.items():
                for data in keyed.values():
                    yield u, v, data

    def nodes_of(self, *kinds: str) -> list[str]:
        return [n for n, data in self._node.items() if data.get("kind") in kinds]

    def runnables(self) -> list[str]:
        return [n for n in self.nodes_of(*RUNNABLE_KINDS) if "/" not in n]

    def edges_of(self, *kinds: str) -> Iterator[tuple[str, str, dict[str, Any]]]:
        for u, v, data in self.edges():
            if data["kind"] in kinds:
                yield u, v, data

    def out(self, id: str, kind: str) -> list[str]:
        return [v for v, keyed in self._succ[id].items() for data in keyed.values() if data["kind"] == kind]

    def to_json(self) -> dict[str, Any]:
        """Node-link JSON; stable: declaration order, no hash order, relative paths."""
        base = str(self.base_dir) if self.base_dir else None
        nodes = []
        for id, data in self._node.items():
            attrs = {k: _jsonable(v, base) for k, v in data.items() if k not in ("kind", "name", "span", "file")}
            nodes.append({"id": id, "kind": data["kind"], "attrs": attrs, "span": span_json(data["span"], self.base_dir)})
        edges = []
        for u, v, data in self.edges():
            attrs = {k: _jsonable(val, base) for k, val in data.items() if k not in ("kind", "span")}
            edges.append(
                {"source": u, "target": v, "kind": data["kind"], "attrs": attrs, "span": span_json(data["span"], self.base_dir)}
            )
        return {"version": GRAPH_JSON_VERSION, "entry": self.entry, "nodes": nodes, "edges": edges}
