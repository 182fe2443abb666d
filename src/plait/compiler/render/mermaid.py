"""Scene → Mermaid flowchart text, built as a list of lines (no subprocess).

Ids are rewritten so nothing a user names can collide with a generated id or
a Mermaid keyword (`end`, ids starting with `o`/`x`): declared names become
`n_<name>`, generated ids `g_<hex-escaped>`. Label text is entity-escaped.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from ..graph import AgentGraph
from .scene import Cluster, RenderOptions, Scene, build_scene
from .style import EDGE_STYLES, GATE, NODE_STYLES

__all__ = ["label_text", "mermaid_id", "scene_to_mermaid", "to_mermaid"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# One pass with str.translate, so the `#` that starts every entity is never escaped twice.
_ENTITIES = str.maketrans(
    {
        "#": "#35;",
        '"': "#quot;",
        "<": "#lt;",
        ">": "#gt;",
        "&": "#amp;",
        "|": "#124;",
        "`": "#96;",
        "{": "#123;",
        "}": "#125;",
        "[": "#91;",
        "]": "#93;",
        "\n": " ",
        "\r": "",
    }
)


@lru_cache(maxsize=8192)
def mermaid_id(id: str) -> str:
    if _NAME.match(id):
        return f"n_{id}"
    return "g_" + "".join(c if c.isascii() and c.isalnum() else f"_{ord(c):02x}" for c in id)


_NEEDS_ESCAPE = re.compile("[" + re.escape("".join(chr(c) for c in _ENTITIES)) + "]")


def label_text(text: str) -> str:
    """Text → safe inside a quoted Mermaid label, on one line."""
    # Most labels are plain names; a C-level search is cheaper than translating every one.
    return text.translate(_ENTITIES) if _NEEDS_ESCAPE.search(text) else text


def _label(lines: list[str]) -> str:
    head, *rest = lines
    return "<br/>".join([f"<b>{label_text(head)}</b>", *(label_text(line) for line in rest)])


def _node(node: Any, indent: str) -> str:
    style = NODE_STYLES[node.kind]
    return f'{indent}{mermaid_id(node.id)}{style.mermaid_open}"{_label(node.lines)}"{style.mermaid_close}'


def _cluster(cluster: Cluster, nodes: dict[str, Any], indent: str, out: list[str]) -> None:
    out.append(f'{indent}subgraph {mermaid_id(cluster.id)}["{label_text(cluster.title)}"]')
    for n in cluster.nodes:
        out.append(_node(nodes[n], indent + "  "))
    for child in cluster.children:
        _cluster(child, nodes, indent + "  ", out)
    out.append(f"{indent}end")


def _edge(edge: Any) -> str:
    arrow = EDGE_STYLES[edge.kind].mermaid_arrow
    label = f'|"{label_text(edge.label)}"|' if edge.label else ""
    return f"  {mermaid_id(edge.source)} {arrow}{label} {mermaid_id(edge.target)}"


def _class_defs(scene: Scene) -> list[str]:
    kinds = list(dict.fromkeys(n.kind for n in scene.nodes))
    out = [f"  classDef {k} fill:{NODE_STYLES[k].fill},stroke:{NODE_STYLES[k].stroke},color:#17202a" for k in kinds]
    out += [
        f"  class {','.join(mermaid_id(n.id) for n in scene.nodes if n.kind == k and not n.gate)} {k}"
        for k in kinds
        if any(n.kind == k and not n.gate for n in scene.nodes)
    ]
    gated = [mermaid_id(n.id) for n in scene.nodes if n.gate]
    if gated:
        out.append(f"  classDef gate fill:{GATE.fill},stroke:{GATE.stroke},stroke-width:3px,color:#17202a")
        out.append(f"  class {','.join(gated)} gate")
    # Coverage marks (`plait render --coverage`), after the kinds' classes so they win.
    for mark, style in (
        ("missed", "fill:#f5b7b1,stroke:#c0392b,stroke-width:3px,color:#17202a"),
        ("partial", "stroke:#d68910,stroke-width:3px,stroke-dasharray:5 3"),
    ):
        marked = [mermaid_id(n.id) for n in scene.nodes if n.missed == mark]
        if marked:
            out.append(f"  classDef {mark} {style}")
            out.append(f"  class {','.join(marked)} {mark}")
    return out


def _link_styles(scene: Scene) -> list[str]:
    """One `linkStyle` per edge kind, listing the edge indexes of that kind."""
    by_kind: dict[str, list[str]] = {}
    for index, edge in enumerate(scene.edges):
        by_kind.setdefault(edge.kind, []).append(str(index))
    out = []
    for kind, indexes in by_kind.items():
        style = EDGE_STYLES[kind]
        if kind == "layout":
            continue
        dash = f",stroke-dasharray:{style.dasharray}" if style.dasharray else ""
        out.append(f"  linkStyle {','.join(indexes)} stroke:{style.color},stroke-width:{style.penwidth:g}px{dash}")
    missed = [str(i) for i, edge in enumerate(scene.edges) if edge.missed]
    if missed:
        out.append(f"  linkStyle {','.join(missed)} stroke:#c0392b,stroke-width:2px,stroke-dasharray:5 3")
    return out


def scene_to_mermaid(scene: Scene) -> str:
    out = ["flowchart " + scene.direction]
    if scene.note:
        out.append(f"  %% {scene.note}")
    nodes = {n.id: n for n in scene.nodes}
    enclosing = scene.enclosing()
    for cluster in scene.clusters:
        _cluster(cluster, nodes, "  ", out)
    out += [_node(n, "  ") for n in scene.nodes if n.id not in enclosing]
    out += [_edge(e) for e in scene.edges]
    out += _class_defs(scene)
    out += _link_styles(scene)
    return "\n".join(out) + "\n"


def to_mermaid(graph: AgentGraph, options: RenderOptions = RenderOptions()) -> str:
    return scene_to_mermaid(build_scene(graph, options))
