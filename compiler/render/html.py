"""AgentGraph + spec sources → one self-contained HTML page: the picture beside the source.

No network: the SVG is inline (or, without Graphviz, the Mermaid source is
shown as text), the script and styles are inline. Clicking a node, or a name
in the list under the picture, highlights its declaration's lines.
"""

from __future__ import annotations

import html as _html
import json
from pathlib import Path
from typing import Any

from .dot import scene_to_dot
from .image import dot_available, dot_to_image
from .mermaid import scene_to_mermaid
from .redact import redact_text
from .scene import RenderOptions, Scene, build_scene

__all__ = ["declaration_lines", "to_html"]

_CSS = """
body{margin:0;font:14px/1.4 "DejaVu Sans",system-ui,sans-serif;color:#17202a;display:flex;height:100vh}
#picture{flex:3;overflow:auto;padding:12px;border-right:1px solid #ccd1d1}
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
""".strip()


def declaration_lines(graph: Any, sources: dict) -> dict[str, tuple[int, int, int]]:
    """node id → (file index, first line, last line) of its whole declaration."""
    from plait.dsl.parser import parse_module

    files = list(sources)
    whole: dict[str, tuple[int, int, int]] = {}
    for index, path in enumerate(files):
        module, _ = parse_module(sources[path])
        for decl in module.declarations if module else ():
            if decl.kind != "import":
                whole[decl.name.name] = (index, decl.span.line, decl.span.end_line)
    out = {}
    for id, data in graph.nx.nodes(data=True):
        span = data["span"]
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
            f'<span class="ln" id="f{index}-L{n}" data-n="{n}">{_html.escape(line)}</span>' for n, line in enumerate(lines, 1)
        )
        parts.append(f"<h2>{_html.escape(path)}</h2><pre>{body}</pre>")
    return "".join(parts)


def _picture(scene: Scene) -> str:
    if dot_available():
        svg = dot_to_image(scene_to_dot(scene), "svg").decode("utf-8")
        # Drop the XML prolog and doctype: inline SVG in HTML takes the <svg> element only.
        return svg[svg.index("<svg") :]
    note = "<p>Graphviz <code>dot</code> is not installed, so the picture is shown as its Mermaid source.</p>"
    return note + f"<pre>{_html.escape(scene_to_mermaid(scene))}</pre>"


def to_html(graph: Any, options: RenderOptions, sources: dict) -> str:
    scene = build_scene(graph, options)
    spans = declaration_lines(graph, sources)
    names = "".join(
        f'<button data-id="{_html.escape(n.id)}">{_html.escape(n.id)}</button>' for n in scene.nodes if n.id in spans
    )
    title = _html.escape(_display(next(iter(sources), "plait graph"), graph.base_dir))
    # `</` cannot appear inside the JSON: names are identifiers and generated ids have no `<`.
    span_json = json.dumps(spans, separators=(",", ":"))
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><title>{title}</title><style>{_CSS}</style></head>\n'
        f'<body><div id="picture">{_picture(scene)}<div id="names">{names}</div></div>\n'
        f'<div id="source">{_source_pane(sources, graph.base_dir)}</div>\n'
        f'<script type="application/json" id="spans">{span_json}</script>\n'
        f"<script>{_JS}</script></body></html>\n"
    )
