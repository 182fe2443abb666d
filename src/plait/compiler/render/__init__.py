"""AgentGraph → pictures: DOT, Mermaid, JSON, HTML and (through Graphviz) SVG/PNG/PDF.

`scene.py` decides what is drawn (kinds, contracts, clusters, folding,
subsetting, expanded turns); `dot.py` and `mermaid.py` only spell a scene;
`image.py` is the only module that starts a process.
"""

from __future__ import annotations

from .api import FORMATS, IMAGE_FORMATS, TEXT_FORMATS, RenderError, graph_json, graph_json_chunks, render
from .scene import HIDEABLE, RenderOptions, build_scene

__all__ = [
    "FORMATS",
    "HIDEABLE",
    "IMAGE_FORMATS",
    "RenderError",
    "RenderOptions",
    "TEXT_FORMATS",
    "build_scene",
    "graph_json",
    "graph_json_chunks",
    "render",
]
