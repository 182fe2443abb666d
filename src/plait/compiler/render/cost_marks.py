"""A scene + the static cost bound → the same scene with each runnable's worst case in its label, for every format.

`plait render --cost` (src/plait/compiler/bounds.py computes it, as `plait
cost` prints it): a node or container gets one more line, its most model
calls and USD per run; a runnable placed twice shows its first place's bound.
"""

from __future__ import annotations

from typing import Any

from .scene import Cluster, Scene

__all__ = ["NOTE", "label", "mark"]

NOTE = "cost: the most model calls and USD a run spends in each (plait cost)"


def label(cost: Any) -> str:
    calls = cost.calls.text()
    usd = cost.usd.text(usd=True)
    return f"≤ {calls} calls, ≤ {usd}" if cost.calls.bounded or cost.usd.bounded else "cost unbounded"


def mark(scene: Scene, found: list[Any]) -> None:
    costs: dict[str, Any] = {}
    for entry in found:
        for row in entry.rows:
            costs.setdefault(row.name, row.cost)
    for node in scene.nodes:
        cost = costs.get(node.id)
        if cost is not None:
            node.lines = [*node.lines, label(cost)]
    stack: list[Cluster] = list(scene.clusters)
    while stack:
        cluster = stack.pop()
        stack.extend(cluster.children)
        name = cluster.id.removeprefix("cluster:")
        cost = costs.get(name)
        if cost is not None and name != cluster.id:
            cluster.title = f"{cluster.title} ({label(cost)})"
    scene.note = f"{scene.note}; {NOTE}" if scene.note else NOTE
