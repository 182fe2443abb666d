"""AgentGraph + format + options → the rendered output (str for text formats, bytes for images).

Builders are imported on use, so `plait render -f mermaid` never loads the
Graphviz package.
"""

from __future__ import annotations

import json
from typing import Any

from .scene import RenderOptions, SceneError, build_scene

__all__ = ["FORMATS", "IMAGE_FORMATS", "TEXT_FORMATS", "RenderError", "graph_json", "render"]

TEXT_FORMATS = ("dot", "mermaid", "json", "html")
IMAGE_FORMATS = ("svg", "png", "pdf")
FORMATS = IMAGE_FORMATS + TEXT_FORMATS

#: A bad option or a missing Graphviz; the message is one line for the user.
RenderError = SceneError


def graph_json(graph: Any) -> str:
    """`graph.to_json()` as indented text, with credential-looking values redacted."""
    from .redact import redact_graph_json

    return json.dumps(redact_graph_json(graph.to_json()), indent=2, ensure_ascii=False) + "\n"


def render(graph: Any, format: str = "dot", options: RenderOptions = RenderOptions(), sources: dict | None = None) -> str | bytes:
    """Draw `graph` as `format`. `sources` (path → SourceFile) feeds the HTML page's source pane."""
    if format == "json":
        # The scene is still built, so a bad --entry/--hide is an error in every format.
        build_scene(graph, options)
        return graph_json(graph)
    if format == "dot":
        from .dot import to_dot

        return to_dot(graph, options)
    if format == "mermaid":
        from .mermaid import to_mermaid

        return to_mermaid(graph, options)
    if format == "html":
        from .html import to_html

        return to_html(graph, options, sources or {})
    if format in IMAGE_FORMATS:
        from .dot import to_dot
        from .image import dot_to_image

        return dot_to_image(to_dot(graph, options), format)
    raise SceneError(f"unknown format `{format}`; expected one of: {', '.join(FORMATS)}")
