"""Checked declarations → AgentGraph: typed node and edge records, and a networkx MultiDiGraph on demand.

The contract (node kinds, attributes, edges, JSON) is documented in
docs/graph.md; renderers, `plait graph`, `plait diff` and the runtime read
only this object, by attribute (the records are in `plait.core.graph`).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

from plait.core.graph import RUNNABLE_KINDS, Edge, Node, Runnable, edge_json, record_json
from plait.core.source import Span
from plait.core.types import Type

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


class AgentGraph:
    """A compiled spec. Build with `add`/`connect` in declaration order; then read.

    The records live in plain dicts of plait's own, so `plait check` never pays
    for importing networkx. `.nx` builds a MultiDiGraph from them, through
    networkx's public API, on first use (node attribute `record`, edge
    attributes `record` and `kind`); nothing is added after that.
    """

    def __init__(self, base_dir: Path | None = None) -> None:
        self.base_dir = base_dir
        self.entry: str | None = None
        self._nodes: dict[str, Node] = {}
        #: source → target → edges, in the order added (networkx's own edge order).
        self._out: dict[str, dict[str, list[Edge]]] = {}
        self._nx: nx.MultiDiGraph | None = None
        self._protected: AgentGraph | None = None

    @property
    def nx(self) -> "nx.MultiDiGraph":
        if self._nx is None:
            import networkx

            graph = networkx.MultiDiGraph()
            graph.add_nodes_from((id, {"record": node, "kind": node.kind}) for id, node in self._nodes.items())
            graph.add_edges_from(
                (e.source, e.target, f"{e.kind}:{i}", {"record": e, "kind": e.kind}) for i, e in enumerate(self.edges())
            )
            self._nx = graph
        return self._nx

    # --- building -----------------------------------------------------------------

    def add(self, node: Node) -> None:
        """Add (or replace) a node record; its id is `node.name`."""
        self._protected = None
        if self._nx is not None:
            raise RuntimeError("the graph is read-only once .nx is built")
        self._nodes[node.name] = node
        self._out.setdefault(node.name, {})

    def connect(self, edge: Edge) -> None:
        """Add an edge between two nodes already added; one with an unknown end (a spec with errors) is dropped."""
        if self._nx is not None:
            raise RuntimeError("the graph is read-only once .nx is built")
        if edge.source in self._nodes and edge.target in self._nodes:
            self._out[edge.source].setdefault(edge.target, []).append(edge)

    def retype(self, id: str, output: Type) -> None:
        """Set a runnable's inferred output type (the type inference pass runs after building)."""
        node = self._nodes[id]
        if not isinstance(node, Runnable):
            raise TypeError(f"`{id}` is {node.kind}, which has no output")
        self.add(replace(node, output=output))

    # --- reading ------------------------------------------------------------------

    def node(self, id: str) -> Node:
        return self._nodes[id]

    def get(self, id: str | None) -> Node | None:
        return self._nodes.get(id) if id is not None else None

    def __contains__(self, id: object) -> bool:
        return id in self._nodes

    def nodes(self) -> Iterator[Node]:
        """Every node record, in declaration order (generated nodes right after their owner)."""
        return iter(self._nodes.values())

    def nodes_of(self, *kinds: str) -> list[str]:
        return [id for id, node in self._nodes.items() if node.kind in kinds]

    def runnables(self) -> list[str]:
        """Declared runnables, in declaration order (generated ones such as inline parallels excluded)."""
        return [id for id, node in self._nodes.items() if node.kind in RUNNABLE_KINDS and "/" not in id]

    def edges(self, *kinds: str) -> Iterator[Edge]:
        """Edges (all, or of `kinds`) grouped by source in declaration order, then target, then as added."""
        for targets in self._out.values():
            for keyed in targets.values():
                for edge in keyed:
                    if not kinds or edge.kind in kinds:
                        yield edge

    def out_edges(self, id: str, *kinds: str) -> list[Edge]:
        return [e for keyed in self._out[id].values() for e in keyed if not kinds or e.kind in kinds]

    def out(self, id: str, kind: str) -> list[str]:
        return [e.target for e in self.out_edges(id, kind)]

    def protected(self) -> AgentGraph:
        """This graph with every secret-bearing attribute behind `core.redact.Secret` (reads as "<redacted>").

        Every output (JSON, pictures, diff) reads this; building and checking never pay for it, and the
        runtime reads the plain records."""
        if self._protected is None:
            from plait.core.redact import protect_record

            out = AgentGraph(self.base_dir)
            out.entry = self.entry
            out._nodes = {id: protect_record(node) for id, node in self._nodes.items()}
            out._out = self._out  # edges hold names, literals and paths, which the check has seen (P501)
            out._protected = out
            self._protected = out
        return self._protected

    def to_json(self) -> dict[str, Any]:
        """Node-link JSON; stable: declaration order, no hash order, relative paths."""
        nodes, edges = list(self.json_nodes()), list(self.json_edges())
        return {"version": GRAPH_JSON_VERSION, "entry": self.entry, "nodes": nodes, "edges": edges}

    def json_nodes(self) -> Iterator[dict[str, Any]]:
        """`to_json()["nodes"]` one at a time (`plait graph` streams them: a big graph's whole document was
        four times the graph)."""
        relative = self._relative()
        for id, node in self.protected()._nodes.items():
            yield {
                "id": id,
                "kind": node.kind,
                "attrs": record_json(node, relative),
                "span": span_json(node.span, self.base_dir),
            }

    def json_edges(self) -> Iterator[dict[str, Any]]:
        """`to_json()["edges"]` one at a time."""
        relative = self._relative()
        for e in self.edges():
            yield {
                "source": e.source,
                "target": e.target,
                "kind": e.kind,
                "attrs": edge_json(e, relative),
                "span": span_json(e.span, self.base_dir),
            }

    def _relative(self) -> Callable[[str], str]:
        """A path shown against the spec's folder: absolute paths (script files, tool folders) differ per machine."""
        base = str(self.base_dir) if self.base_dir else None

        def relative(value: str) -> str:
            if base and value.startswith(base):
                return value[len(base) :].lstrip("/\\") or "."
            return value

        return relative
