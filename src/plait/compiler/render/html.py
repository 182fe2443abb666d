"""AgentGraph + spec sources → one self-contained HTML page: the picture beside the source.

No network: the SVG, the script and the styles are inline. The picture is
fitted to the window and can be zoomed (wheel, +/−) and panned (drag); `fit`
and `1:1` reset it. Clicking a node, or a name in the list under the
picture, highlights its declaration's lines.

The picture needs Graphviz. Without it the page is still written (source and
names), says so where the picture would be, and `to_html` raises
`GraphvizNeeded` carrying that page, so the CLI can write it, say the same on
stderr and exit 2 as `--format svg` does.
"""

from __future__ import annotations

import html as _html
import json
import re
from pathlib import Path
from typing import Any

from plait.core.redact import redact_text

from ..graph import AgentGraph
from .dot import scene_to_dot
from .image import INSTALL_HINT, DotMissing, dot_available, dot_to_image
from .scene import RenderOptions, Scene, build_scene

__all__ = ["GraphvizNeeded", "declaration_lines", "to_html"]

#: What the page and stderr say when the picture cannot be drawn.
NEEDS_GRAPHVIZ = "the HTML picture needs Graphviz `dot`, which is not installed"


class GraphvizNeeded(DotMissing):
    """No Graphviz: `partial` is the page without its picture (source pane and names), worth writing anyway."""

    def __init__(self, message: str, partial: str) -> None:
        super().__init__(message)
        self.partial = partial


_CSS = """
body{margin:0;font:14px/1.4 "DejaVu Sans",system-ui,sans-serif;color:#17202a;display:flex;height:100vh}
#picture{flex:3;display:flex;flex-direction:column;min-width:0;padding:12px;border-right:1px solid #ccd1d1}
#canvas{flex:1;min-height:0;overflow:hidden;border:1px solid #eaeded;border-radius:4px;cursor:grab;touch-action:none}
#canvas.drag{cursor:grabbing}#canvas svg{width:100%;height:100%;display:block}
#zoom{margin-bottom:6px}#zoom button{font:12px monospace;min-width:2.4em;cursor:pointer;margin-right:2px}
#missing{padding:24px;font-size:15px;color:#943126}#names{max-height:25%;overflow:auto}
#source{flex:2;overflow:auto;padding:12px;background:#fbfcfc}
pre{margin:0 0 16px;font:12px/1.5 "DejaVu Sans Mono",monospace}
.ln{display:block;white-space:pre}.ln::before{content:attr(data-n);display:inline-block;width:3em;color:#aab7b8}
.ln.hl{background:#fcf3cf}
g.node{cursor:pointer}g.node.hl polygon,g.node.hl path,g.node.hl ellipse{stroke-width:4px}
#names button{margin:2px;font:12px monospace;cursor:pointer;border:1px solid #ccd1d1;background:#fff;border-radius:3px}
h2{font-size:13px;margin:8px 0;color:#566573}
""".strip()

_JS = """
const spans = JSON.parse(document.getElementById('spans').textContent);
function show(id){
  document.querySelectorAll('.hl').forEach(e => e.classList.remove('hl'));
  const s = spans[id]; if(!s) return;
  const g = document.getElementById('plait:' + id); if(g) g.classList.add('hl');
  let first = null;
  for(let n = s[1]; n <= s[2]; n++){
    const l = document.getElementById('f' + s[0] + '-L' + n);
    if(l){ l.classList.add('hl'); first = first || l; }
  }
  if(first) first.scrollIntoView({block: 'center'});
}
document.querySelectorAll('g.node').forEach(g => g.addEventListener('click', () => show(g.id.slice(6))));
document.querySelectorAll('#names button').forEach(b => b.addEventListener('click', () => show(b.dataset.id)));
// Zoom and pan move the SVG's viewBox. The box always has the canvas's shape, so the drawing fills the pane
// and a point's fraction of the canvas is the same fraction of the box: zooming keeps the point under the
// cursor where it is (a box of another shape is letterboxed, and the point drifts by the letterbox).
const canvas = document.getElementById('canvas');
const svg = canvas && canvas.querySelector('svg');
if(svg){
  const whole = svg.getAttribute('viewBox').split(/[ ,]+/).map(Number);
  const shaped = b => {
    const r = canvas.getBoundingClientRect(), a = r.width / r.height;
    if(!(a > 0)) return b;
    const [x, y, w, h] = b;
    return w / h < a ? [x - (h * a - w) / 2, y, h * a, h] : [x, y - (w / a - h) / 2, w, w / a];
  };
  let box = shaped(whole.slice());
  const apply = () => svg.setAttribute('viewBox', box.join(' '));
  const fit = () => { box = shaped(whole.slice()); apply(); };
  // Scale by `f` around a point given as fractions of the canvas (0.5, 0.5 = centre).
  const zoom = (f, fx, fy) => {
    const w = box[2] * f, h = box[3] * f;
    box = [box[0] + (box[2] - w) * fx, box[1] + (box[3] - h) * fy, w, h]; apply();
  };
  // 1:1 shows the drawing at its own size (Graphviz points = CSS pixels at 72 dpi / 96).
  const actual = () => {
    const r = canvas.getBoundingClientRect(), w = r.width * 0.75, h = r.height * 0.75;
    box = [whole[0] + (whole[2] - w) / 2, whole[1] + (whole[3] - h) / 2, w, h]; apply();
  };
  canvas.addEventListener('wheel', e => {
    e.preventDefault();
    const r = canvas.getBoundingClientRect();
    zoom(e.deltaY > 0 ? 1.15 : 1 / 1.15, (e.clientX - r.left) / r.width, (e.clientY - r.top) / r.height);
  }, {passive: false});
  let from = null;
  canvas.addEventListener('pointerdown', e => { from = [e.clientX, e.clientY]; canvas.classList.add('drag'); });
  window.addEventListener('pointerup', () => { from = null; canvas.classList.remove('drag'); });
  window.addEventListener('pointermove', e => {
    if(!from) return;
    const unit = box[2] / canvas.getBoundingClientRect().width;
    box[0] -= (e.clientX - from[0]) * unit; box[1] -= (e.clientY - from[1]) * unit;
    from = [e.clientX, e.clientY]; apply();
  });
  // A pane of another shape would letterbox the box again: fit the drawing to it anew.
  window.addEventListener('resize', fit);
  apply();
  const act = {fit: fit, actual: actual, in: () => zoom(1 / 1.25, 0.5, 0.5), out: () => zoom(1.25, 0.5, 0.5)};
  document.querySelectorAll('#zoom button').forEach(b => b.addEventListener('click', () => act[b.dataset.zoom]()));
  window.addEventListener('keydown', e => {
    if(e.target.tagName === 'INPUT') return;
    const k = {'+': 'in', '=': 'in', '-': 'out', '0': 'fit'}[e.key]; if(k) act[k]();
  });
}
""".strip()


def declaration_lines(graph: AgentGraph, sources: dict) -> dict[str, tuple[int, int, int]]:
    """node id → (file index, first line, last line) of its whole declaration."""
    from plait.dsl.parser import parse_module

    files = list(sources)
    whole: dict[str, tuple[int, int, int]] = {}
    for index, path in enumerate(files):
        module, _ = parse_module(sources[path])
        for decl in module.declarations if module else ():
            name = getattr(decl, "name", None)
            if name is not None:
                whole[name.name] = (index, decl.span.line, decl.span.end_line)
            elif decl.kind in ("input", "state"):
                whole[f"@{decl.kind}"] = (index, decl.span.line, decl.span.end_line)
    out = {}
    for node in graph.nodes():
        id, span = node.name, node.span
        if id in whole:
            out[id] = whole[id]
        elif span is not None and span.file in sources:
            # Generated nodes (an inline parallel, a join) point at where they were written.
            out[id] = (files.index(span.file), span.line, span.end_line)
    return out


def _display(path: str, base: Any) -> str:
    """A path as shown on the page: relative to the spec's folder, so the page is the same on every machine."""
    try:
        return str(Path(path).resolve().relative_to(base)) if base else path
    except ValueError:
        return path


def _source_pane(sources: dict, base: Any) -> str:
    parts = []
    for index, (path, source) in enumerate(sources.items()):
        path = _display(path, base)
        lines = redact_text(source.text).split("\n")
        body = "".join(
            f'<span class="ln" id="f{index}-L{n}" data-n="{n}">{_html.escape(line)}</span>'
            for n, line in enumerate(lines, 1)
        )
        parts.append(f"<h2>{_html.escape(path)}</h2><pre>{body}</pre>")
    return "".join(parts)


_ZOOM = (
    '<div id="zoom"><button data-zoom="fit" title="fit to the window (0)">fit</button>'
    '<button data-zoom="in" title="zoom in (+, wheel)">+</button>'
    '<button data-zoom="out" title="zoom out (-, wheel)">−</button>'
    '<button data-zoom="actual" title="actual size">1:1</button> drag to pan</div>'
)
#: The root element's fixed size in points; dropped so CSS sizes it to the canvas and the viewBox fits the drawing.
_SVG_SIZE = re.compile(r'\s(?:width|height)="[^"]*"')


def _svg(scene: Scene) -> str:
    svg = dot_to_image(scene_to_dot(scene), "svg").decode("utf-8")
    # Drop the XML prolog and doctype: inline SVG in HTML takes the <svg> element only.
    svg = svg[svg.index("<svg") :]
    head, rest = svg.split(">", 1)
    return _SVG_SIZE.sub("", head) + ' preserveAspectRatio="xMidYMid meet">' + rest


def _missing() -> str:
    return (
        f'<div id="missing"><p><b>No picture: {_html.escape(NEEDS_GRAPHVIZ)}.</b></p>'
        "<p>Install Graphviz (<code>apt install graphviz</code>, <code>brew install graphviz</code>, "
        "<code>choco install graphviz</code>) and run <code>plait render</code> again. "
        "<code>plait render --format mermaid</code> gives a text picture without it.</p></div>"
    )


def to_html(graph: AgentGraph, options: RenderOptions, sources: dict) -> str:
    """The page; without Graphviz, raises GraphvizNeeded with the page minus its picture."""
    scene = build_scene(graph, options)
    drawn = dot_available()
    picture = f'{_ZOOM}<div id="canvas">{_svg(scene)}</div>' if drawn else _missing()
    spans = declaration_lines(graph, sources)
    names = "".join(
        f'<button data-id="{_html.escape(n.id)}">{_html.escape(n.id)}</button>' for n in scene.nodes if n.id in spans
    )
    title = _html.escape(_display(next(iter(sources), "plait graph"), graph.base_dir))
    # `</` cannot appear inside the JSON: names are identifiers and generated ids have no `<`.
    span_json = json.dumps(spans, separators=(",", ":"))
    page = (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><title>{title}</title><style>{_CSS}</style></head>\n'
        f'<body><div id="picture">{picture}<div id="names">{names}</div></div>\n'
        f'<div id="source">{_source_pane(sources, graph.base_dir)}</div>\n'
        f'<script type="application/json" id="spans">{span_json}</script>\n'
        f"<script>{_JS}</script></body></html>\n"
    )
    if not drawn:
        raise GraphvizNeeded(
            f"{NEEDS_GRAPHVIZ}; the page was written without it. {INSTALL_HINT.split('; ', 1)[1]}", page
        )
    return page
