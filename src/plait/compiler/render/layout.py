"""Scene nodes and edges → the layout direction ("LR" or "TB") whose picture best fits a screen.

A long chain drawn left to right is a strip far wider than any window, and a
wide parallel drawn top to bottom is the same strip turned over. Graphviz lays
nodes out in ranks along the direction of the edges, so the picture's size can
be estimated before drawing: each rank is as deep as its largest node, and as
long as its nodes side by side. The direction whose estimated aspect ratio is
nearer a landscape screen's (16:10) wins; a tie keeps the usual left to right.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    from .scene import SceneEdge, SceneNode

__all__ = ["SCREEN", "choose_direction"]

#: Width / height of the pane a picture is looked at in.
SCREEN = 1.6
#: Points a character and a line of a label take, and the gaps Graphviz leaves (dot.py's nodesep/ranksep).
_CHAR, _LINE, _PAD, _NODESEP, _RANKSEP = 7.0, 16.0, 18.0, 18.0, 32.0


def _ranks(nodes: list[str], edges: Iterable[tuple[str, str]]) -> dict[str, int]:
    """Longest-path rank of each node, with the edges that close a cycle (a loop's way back) left out."""
    out: dict[str, list[str]] = {n: [] for n in nodes}
    for source, target in edges:
        if source in out and target in out and source != target:
            out[source].append(target)
    # Depth-first from every node in declaration order: an edge to a node still on the stack closes a cycle.
    order: list[str] = []
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    forward: dict[str, list[str]] = {n: [] for n in nodes}
    for root in nodes:
        if root in state:
            continue
        state[root] = 1
        stack = [(root, iter(out[root]))]
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                order.append(node)
                stack.pop()
            elif state.get(child) != 1:
                forward[node].append(child)
                if child not in state:
                    state[child] = 1
                    stack.append((child, iter(out[child])))
    rank = dict.fromkeys(nodes, 0)
    for node in reversed(order):  # a topological order of the forward edges
        for child in forward[node]:
            rank[child] = max(rank[child], rank[node] + 1)
    return rank


def _size(lines: list[str]) -> tuple[float, float]:
    return max((len(line) for line in lines), default=1) * _CHAR + _PAD, len(lines) * _LINE + _PAD


def choose_direction(nodes: list[SceneNode], edges: list[SceneEdge]) -> str:
    """ "LR" or "TB", whichever draws these nodes nearer the screen's shape."""
    sizes = {n.id: _size(n.lines) for n in nodes}
    if not sizes:
        return "LR"
    rank = _ranks(list(sizes), ((e.source, e.target) for e in edges if e.kind != "layout"))
    # Per rank: along the edges, the largest node (its width LR, its height TB); across, the nodes side by side.
    lr_deep: dict[int, float] = {}
    lr_wide: dict[int, float] = {}
    tb_deep: dict[int, float] = {}
    tb_wide: dict[int, float] = {}
    for node, (w, h) in sizes.items():
        r = rank[node]
        lr_deep[r] = max(lr_deep.get(r, 0.0), w)
        lr_wide[r] = lr_wide.get(r, 0.0) + h + _NODESEP
        tb_deep[r] = max(tb_deep.get(r, 0.0), h)
        tb_wide[r] = tb_wide.get(r, 0.0) + w + _NODESEP
    lr = (sum(lr_deep.values()) + _RANKSEP * len(lr_deep)) / max(lr_wide.values())
    tb = max(tb_wide.values()) / (sum(tb_deep.values()) + _RANKSEP * len(tb_deep))
    miss_lr, miss_tb = abs(math.log(lr / SCREEN)), abs(math.log(tb / SCREEN))
    return "TB" if miss_tb < miss_lr else "LR"
