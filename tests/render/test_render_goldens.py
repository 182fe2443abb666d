"""Every fixture and every example renders in every format, byte for byte as its golden.

UPDATE_GOLDENS=1 rewrites the goldens (review the diff before committing).
SVG and HTML (which inlines the SVG) are compared only with the Graphviz
version the goldens were made with, since layouts change between versions.
"""

from __future__ import annotations

import pytest
from render_helpers import GOLDEN_FORMATS, cases, check_golden, compiled, graphviz_version, pinned_graphviz

from plait.compiler.render import RenderOptions, render

CASES = cases()


@pytest.mark.parametrize("format", list(GOLDEN_FORMATS))
@pytest.mark.parametrize("name,path", CASES, ids=[name for name, _ in CASES])
def test_golden(name, path, format):
    if format in ("svg", "html"):
        if graphviz_version() is None:
            pytest.skip("Graphviz `dot` is not installed")
        pinned = pinned_graphviz()
        if pinned is not None and pinned != graphviz_version():
            pytest.skip(f"SVG goldens were made with Graphviz {pinned}, this is {graphviz_version()}")
    result = compiled(path)
    out = render(result.graph, format, RenderOptions(), result.sources)
    check_golden(f"{name}.{GOLDEN_FORMATS[format]}", out)


def test_the_option_views_have_goldens_too():
    result = compiled(CASES[[n for n, _ in CASES].index("language")][1])
    views = {
        "language.expand-writer.dot": RenderOptions(expand=("writer",)),
        "language.entry-writer.mmd": RenderOptions(entry="writer"),
        "language.hide-TB.dot": RenderOptions(direction="TB", hide=("models", "tools")),
    }
    for golden, options in views.items():
        format = "mermaid" if golden.endswith(".mmd") else "dot"
        check_golden(golden, render(result.graph, format, options))
