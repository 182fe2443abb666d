"""AgentGraph + format + options → the rendered output (str for text formats, bytes for images).

One table maps each format of `core.vocab.RENDER_FORMATS` to its builder;
builders are imported on use, so `plait render -f mermaid` never loads the
Graphviz package.
"""

from __future__ import annotations

import json
from importlib import import_module
from typing import Callable, Iterator

from plait.core.vocab import IMAGE_FORMATS, RENDER_FORMATS, TEXT_RENDER_FORMATS

from ..graph import GRAPH_JSON_VERSION, AgentGraph
from .scene import RenderOptions, SceneError, build_scene

__all__ = ["FORMATS", "IMAGE_FORMATS", "TEXT_FORMATS", "RenderError", "graph_json", "render"]

TEXT_FORMATS = TEXT_RENDER_FORMATS
FORMATS = RENDER_FORMATS

#: A bad option or a missing Graphviz; the message is one line for the user.
RenderError = SceneError

Builder = Callable[[AgentGraph, str, RenderOptions, dict], "str | bytes"]


def graph_json(graph: AgentGraph) -> str:
    """`graph.to_json()` as indented text (its secrets were redacted when the graph was built: core.redact)."""
    return "".join(graph_json_chunks(graph))


def graph_json_chunks(graph: AgentGraph) -> Iterator[str]:
    """`graph_json(graph)` a node or an edge at a time, the same bytes: what `plait graph` writes, so a
    graph of 200,000 agents never holds its whole document (two gigabytes) at once."""
    dumps = json.dumps
    yield f'{{\n  "version": {dumps(GRAPH_JSON_VERSION)},\n  "entry": {dumps(graph.entry, ensure_ascii=False)},\n  "nodes": '
    yield from _json_items(graph.json_nodes())
    yield ',\n  "edges": '
    yield from _json_items(graph.json_edges())
    yield "\n}\n"


def _json_items(items: Iterator[dict]) -> Iterator[str]:
    # json.dumps(indent=2) nests uniformly: an item of a list two levels down is its own dump, four spaces in.
    opened = False
    for item in items:
        text = json.dumps(item, indent=2, ensure_ascii=False).replace("\n", "\n    ")
        yield (",\n    " if opened else "[\n    ") + text
        opened = True
    yield "\n  ]" if opened else "[]"


def _json(graph: AgentGraph, format: str, options: RenderOptions, sources: dict) -> str:
    # The scene is still built, so a bad --entry/--hide is an error in every format.
    build_scene(graph, options)
    return graph_json(graph)


def _text(module: str, function: str) -> Builder:
    def build(graph: AgentGraph, format: str, options: RenderOptions, sources: dict) -> str:
        built: str = getattr(import_module(f"{__package__}.{module}"), function)(graph, options)
        return built

    return build


def _html(graph: AgentGraph, format: str, options: RenderOptions, sources: dict) -> str:
    from .html import to_html

    return to_html(graph, options, sources)


def _image(graph: AgentGraph, format: str, options: RenderOptions, sources: dict) -> bytes:
    from .dot import to_dot
    from .image import dot_to_image

    return dot_to_image(to_dot(graph, options), format)


#: format → builder; a test holds its keys equal to `core.vocab.RENDER_FORMATS`.
BUILDERS: dict[str, Builder] = {
    "dot": _text("dot", "to_dot"),
    "mermaid": _text("mermaid", "to_mermaid"),
    "json": _json,
    "html": _html,
    **{format: _image for format in IMAGE_FORMATS},
}


def render(
    graph: AgentGraph, format: str = "dot", options: RenderOptions = RenderOptions(), sources: dict | None = None
) -> str | bytes:
    """Draw `graph` as `format`. `sources` (path → SourceFile) feeds the HTML page's source pane."""
    build = BUILDERS.get(format)
    if build is None:
        raise SceneError(f"unknown format `{format}`; expected one of: {', '.join(FORMATS)}")
    return build(graph, format, options, sources or {})
