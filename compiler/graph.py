"""Checked declarations → AgentGraph: typed nodes and edges over a networkx MultiDiGraph.

The contract (node kinds, attributes, edges, JSON) is documented in
docs/graph.md; renderers, `plait graph`, `plait diff` and the runtime read
only this object.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import networkx as nx

from plait.dsl.source import Span

__all__ = ["AgentGraph", "GRAPH_JSON_VERSION", "span_json"]

GRAPH_JSON_VERSION = 1
RUNNABLE = ("agent", "step", "chain", "parallel", "consolidate")


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
    """A compiled spec. Build with `add_node`/`add_edge` in declaration order; then read."""

    def __init__(self, base_dir: Path | None = None) -> None:
        self.nx = nx.MultiDiGraph()
        self.base_dir = base_dir
        self.entry: str | None = None
        # len(self.nx.edges) walks every edge: counting here keeps building linear.
        self._edges_added = 0
        # Every node of one file resolves the same path; resolve() is a syscall each time.
        self._resolved: dict[str, str] = {}

    # --- building -----------------------------------------------------------------

    def add_node(self, id: str, kind: str, span: Span | None, **attrs: Any) -> None:
        file = None
        if span and span.file != "<string>":
            file = self._resolved.get(span.file)
            if file is None:
                file = self._resolved[span.file] = str(Path(span.file).resolve())
        self.nx.add_node(id, kind=kind, name=id, span=span, file=file, **attrs)

    def add_edge(self, source: str, target: str, kind: str, span: Span | None, **attrs: Any) -> None:
        self.nx.add_edge(source, target, key=f"{kind}:{self._edges_added}", kind=kind, span=span, **attrs)
        self._edges_added += 1

    # --- reading ------------------------------------------------------------------

    def node(self, id: str) -> dict[str, Any]:
        return self.nx.nodes[id]

    def __contains__(self, id: str) -> bool:
        return id in self.nx

    def nodes_of(self, *kinds: str) -> list[str]:
        return [n for n, data in self.nx.nodes(data=True) if data["kind"] in kinds]

    def runnables(self) -> list[str]:
        return [n for n in self.nodes_of(*RUNNABLE) if "/" not in n]

    def edges_of(self, *kinds: str) -> Iterator[tuple[str, str, dict[str, Any]]]:
        for u, v, data in self.nx.edges(data=True):
            if data["kind"] in kinds:
                yield u, v, data

    def out(self, id: str, kind: str) -> list[str]:
        return [v for _, v, data in self.nx.out_edges(id, data=True) if data["kind"] == kind]

    def to_json(self) -> dict[str, Any]:
        """Node-link JSON; stable: declaration order, no hash order, relative paths."""
        base = str(self.base_dir) if self.base_dir else None
        nodes = []
        for id, data in self.nx.nodes(data=True):
            attrs = {k: _jsonable(v, base) for k, v in data.items() if k not in ("kind", "name", "span", "file")}
            nodes.append({"id": id, "kind": data["kind"], "attrs": attrs, "span": span_json(data["span"], self.base_dir)})
        edges = []
        for u, v, data in self.nx.edges(data=True):
            attrs = {k: _jsonable(val, base) for k, val in data.items() if k not in ("kind", "span")}
            edges.append(
                {"source": u, "target": v, "kind": data["kind"], "attrs": attrs, "span": span_json(data["span"], self.base_dir)}
            )
        return {"version": GRAPH_JSON_VERSION, "entry": self.entry, "nodes": nodes, "edges": edges}
