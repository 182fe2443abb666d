"""Scene → Graphviz DOT text (a pure string builder: no subprocess, no Graphviz import).

Every id is a quoted, escaped string and every node label an HTML-like label
with its text escaped, so names, generated ids (`main/parallel#1`, `@entry`)
and labels holding quotes, newlines or `{{ }}` cannot break the syntax.
"""

from __future__ import annotations

import re
from typing import Any

from ..graph import AgentGraph
from .scene import Cluster, RenderOptions, Scene, build_scene
from .style import EDGE_STYLES, GATE, NODE_STYLES

__all__ = ["html_text", "quote", "scene_to_dot", "to_dot"]

FONT = "DejaVu Sans"
#: Node count above which the layout passes are capped.
LARGE_LAYOUT = 300
_CLUSTER_COLOURS = {"chain": "#566573", "parallel": "#117864", "consolidate": "#943126", "turn": "#7d6608"}


def quote(text: str) -> str:
    """Any text → a DOT double-quoted string."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\r", "").replace("\n", "\\n")
    return f'"{escaped}"'


_HTML = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\n": " ", "\r": ""})


_NEEDS_ESCAPE = re.compile('[&<>"\n\r]')


def html_text(text: str) -> str:
    """Text → safe inside an HTML-like label, on one line."""
    return text.translate(_HTML) if _NEEDS_ESCAPE.search(text) else text


def _label(lines: list[str]) -> str:
    head, *rest = lines
    parts = [f"<B>{html_text(head)}</B>"]
    parts += [f'<FONT POINT-SIZE="9">{html_text(line)}</FONT>' for line in rest]
    return "<" + "<BR/>".join(parts) + ">"


def _node_style(style: Any) -> str:
    return (
        f"shape={style.dot_shape}, style={quote(style.dot_style)}, "
        f"fillcolor={quote(style.fill)}, color={quote(style.stroke)}"
    )


# Built once: a 1,000-agent graph would otherwise format the same few strings thousands of times.
_NODE_STYLE = {kind: _node_style(style) for kind, style in NODE_STYLES.items()}
_GATE_STYLE = _node_style(GATE) + ", penwidth=2.5"


#: Coverage marks (`plait render --coverage`), drawn over the kind's own style.
MISSED = {
    "missed": ', color="#c0392b", fillcolor="#f5b7b1", penwidth=2.5',
    "partial": ', color="#d68910", penwidth=2.5, style="rounded,filled,dashed"',
}
MISSED_EDGE = ', color="#c0392b", fontcolor="#c0392b", style=dashed, penwidth=2'


def _node(node: Any, indent: str) -> str:
    style = _GATE_STYLE if node.gate else _NODE_STYLE[node.kind]
    if node.missed:
        style += MISSED[node.missed]
    extra = ", fontsize=9" if node.kind in ("entry", "exit") else ""
    return f"{indent}{quote(node.id)} [id={quote('plait:' + node.id)}, {style}, label={_label(node.lines)}{extra}];"


def _cluster(cluster: Cluster, nodes: dict[str, Any], indent: str, out: list[str]) -> None:
    colour = _CLUSTER_COLOURS.get(cluster.kind, "#566573")
    out.append(f"{indent}subgraph {quote(cluster.id)} {{")
    inner = indent + "  "
    out.append(
        f'{inner}label={quote(cluster.title)}; labeljust="l"; style="rounded,dashed"; color={quote(colour)}; fontcolor={quote(colour)};'
    )
    for n in cluster.nodes:
        out.append(_node(nodes[n], inner))
    for child in cluster.children:
        _cluster(child, nodes, inner, out)
    out.append(f"{indent}}}")


def _edge_style(kind: str) -> str:
    style = EDGE_STYLES[kind]
    attrs = (
        f"style={style.dot_style}, color={quote(style.color)}, penwidth={style.penwidth:g}, arrowhead={style.arrowhead}"
    )
    if kind in ("calls", "fallback", "uses", "until", "thread"):
        # Resources hang off the flow; they must not stretch the main chain's ranks.
        attrs += ", weight=0"
    if kind in ("loop", "back", "reads", "break"):
        # Back edges of a turn or a loop, and reads: drawn, but the flow still reads left to right.
        attrs += ", constraint=false"
    return attrs


_EDGE_STYLE = {kind: _edge_style(kind) for kind in EDGE_STYLES}


def _edge(edge: Any, enclosing: dict[str, tuple[str, ...]]) -> str:
    if edge.kind == "layout":
        return f"  {quote(edge.source)} -> {quote(edge.target)} [style=invis];"
    attrs = [_EDGE_STYLE[edge.kind]]
    if edge.label:
        attrs += [f"label={quote(edge.label)}", f"fontcolor={quote(EDGE_STYLES[edge.kind].color)}"]
    if edge.missed:
        attrs.append(MISSED_EDGE[2:])
    # A container's edges to the outside start or end at its cluster's border (compound=true).
    own = f"cluster:{edge.source}"
    if own in enclosing.get(edge.source, ()) and own not in enclosing.get(edge.target, ()):
        attrs.append(f"ltail={quote(own)}")
    own = f"cluster:{edge.target}"
    if own in enclosing.get(edge.target, ()) and own not in enclosing.get(edge.source, ()):
        attrs.append(f"lhead={quote(own)}")
    return f"  {quote(edge.source)} -> {quote(edge.target)} [{', '.join(attrs)}];"


def scene_to_dot(scene: Scene) -> str:
    out = [
        "digraph plait {",
        f'  graph [rankdir={scene.direction}, compound=true, newrank=true, fontname="{FONT}", fontsize=11, nodesep=0.25, ranksep=0.45];',
        f'  node [fontname="{FONT}", fontsize=11, margin="0.12,0.05"];',
        f'  edge [fontname="{FONT}", fontsize=9, arrowsize=0.7];',
    ]
    if len(scene.nodes) > LARGE_LAYOUT:
        # Cap Graphviz's optimisation passes: minutes become seconds, the layout stays readable.
        out.append("  nslimit=0.2; mclimit=0.2;")
    nodes = {n.id: n for n in scene.nodes}
    enclosing = scene.enclosing()
    for cluster in scene.clusters:
        _cluster(cluster, nodes, "  ", out)
    out += [_node(n, "  ") for n in scene.nodes if n.id not in enclosing]
    out += [_edge(e, enclosing) for e in scene.edges]
    if scene.note:
        # Last, so the clusters above do not inherit the graph's label position.
        out.append(f'  label={quote(scene.note)}; labelloc="b"; labeljust="l"; fontcolor="#566573";')
    out.append("}")
    return "\n".join(out) + "\n"


def to_dot(graph: AgentGraph, options: RenderOptions = RenderOptions()) -> str:
    return scene_to_dot(build_scene(graph, options))
