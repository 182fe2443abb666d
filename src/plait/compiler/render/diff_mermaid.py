"""Old graph + new graph + their changes → one Mermaid flowchart with the changes highlighted.

For a pull-request comment: the new graph, plus what only the old one had;
added in green, removed in red with dashed lines, changed in amber.
"""

from __future__ import annotations

from ..diff import Change
from ..graph import AgentGraph
from .mermaid import mermaid_id, scene_to_mermaid
from .scene import RenderOptions, Scene, build_scene

__all__ = ["diff_to_mermaid"]

#: A diff draws models and tools as nodes: a changed model or tool is often the change the picture is for.
EVERYTHING = RenderOptions(hide=("none",))

_CLASSES = {
    "added": "fill:#d5f5e3,stroke:#1e8449,stroke-width:3px,color:#17202a",
    "removed": "fill:#fadbd8,stroke:#c0392b,stroke-width:3px,stroke-dasharray:6 4,color:#17202a",
    "changed": "fill:#fdebd0,stroke:#d68910,stroke-width:3px,color:#17202a",
}
_LINKS = {
    "added": "stroke:#1e8449,stroke-width:3px",
    "removed": "stroke:#c0392b,stroke-width:3px,stroke-dasharray:6 4",
    "changed": "stroke:#d68910,stroke-width:3px",
}


def _merged(old: Scene, new: Scene) -> tuple[Scene, dict[str, str], dict[int, str]]:
    """The new scene with the old-only nodes and edges appended; node → status, edge index → status."""
    new_ids = {n.id for n in new.nodes}
    old_ids = {n.id for n in old.nodes}
    status = {n.id: "added" for n in new.nodes if n.id not in old_ids}
    nodes = [*new.nodes]
    for n in old.nodes:
        if n.id not in new_ids:
            nodes.append(n)
            status[n.id] = "removed"
    key = lambda e: (e.source, e.target, e.kind)  # noqa: E731 - a one-line key
    old_edges = {key(e): e for e in old.edges}
    new_edges = {key(e): e for e in new.edges}
    edges: list = []
    links: dict[int, str] = {}
    for e in new.edges:
        if e.kind == "layout":
            continue
        if key(e) not in old_edges:
            links[len(edges)] = "added"
        elif old_edges[key(e)].label != e.label:
            links[len(edges)] = "changed"
        edges.append(e)
    for e in old.edges:
        if key(e) not in new_edges and e.kind != "layout":
            links[len(edges)] = "removed"
            edges.append(e)
    return Scene(new.direction, nodes, edges, new.clusters), status, links


def diff_to_mermaid(
    old: AgentGraph, new: AgentGraph, changes: list[Change], options: RenderOptions = EVERYTHING
) -> str:
    scene, status, links = _merged(build_scene(old, options), build_scene(new, options))
    shown = {n.id for n in scene.nodes}
    for change in changes:
        if change.what in ("contract", "attribute") and change.subject in shown:
            status.setdefault(change.subject, "changed")
    lines = scene_to_mermaid(scene).rstrip("\n").split("\n")
    for name, css in _CLASSES.items():
        ids = [mermaid_id(n.id) for n in scene.nodes if status.get(n.id) == name]
        if ids:
            lines += [f"  classDef {name} {css}", f"  class {','.join(ids)} {name}"]
    for name, css in _LINKS.items():
        indexes = [str(i) for i, s in links.items() if s == name]
        if indexes:
            lines.append(f"  linkStyle {','.join(indexes)} {css}")
    return "\n".join(lines) + "\n"
