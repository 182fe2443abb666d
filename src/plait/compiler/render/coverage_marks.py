"""A scene + a coverage report → the same scene with what no run reached marked, for every format to draw.

A runnable no run reached is `missed`; a node reached without every one of
its items (a loop that never exhausted, an approval never rejected, a map
item never failed) is `partial`; a route case or fallback edge never taken is
a missed edge. An item counts as reached when a run of any entry reached it.
"""

from __future__ import annotations

from typing import Any

from .scene import Scene

__all__ = ["NOTE", "mark"]

NOTE = "coverage: red = no run reached it, dashed orange = reached, not every case/exit/answer"


def mark(scene: Scene, report: Any) -> None:
    reached = {it.id for e in report.entries for it in e.items if it.hit}
    missed_nodes: set[str] = set()
    partial: set[str] = set()
    missed_edges: set[tuple[str, str]] = set()
    for entry in report.entries:
        for it in entry.items:
            if it.id in reached:
                continue
            if it.kind == "runnable":
                missed_nodes.add(it.node)
            elif it.edge is not None:
                missed_edges.add(tuple(it.edge))
                partial.add(it.node)
            else:
                partial.add(it.node)
    for node in scene.nodes:
        if node.id in missed_nodes:
            node.missed = "missed"
        elif node.id in partial:
            node.missed = "partial"
    for edge in scene.edges:
        if (edge.source, edge.target) in missed_edges and edge.kind in ("case", "fallback"):
            edge.missed = True
    scene.note = f"{scene.note}; {NOTE}" if scene.note else NOTE
