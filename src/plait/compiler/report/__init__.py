"""Diagnostics + their sources → one report string, in the format asked for.

Every format renders the same list, masks secrets through `report.mask`, and
is imported only when chosen.
"""

from __future__ import annotations

import os
from importlib import import_module
from typing import Mapping, Sequence, TextIO

from plait.core.diagnostics import Diagnostic
from plait.core.source import SourceFile
from plait.core.vocab import REPORT_FORMATS

__all__ = ["EMITTERS", "FORMATS", "render", "wants_color"]

#: format name -> (module, function); a test holds the keys equal to `core.vocab.REPORT_FORMATS`.
EMITTERS = {
    "text": ("text", "render_text"),
    "json": ("json", "render_json"),
    "github": ("github", "render_github"),
    "sarif": ("sarif", "render_sarif"),
}
FORMATS = REPORT_FORMATS


def render(
    diagnostics: Sequence[Diagnostic],
    sources: Mapping[str, SourceFile],
    format: str = "text",
    color: bool = False,
    **options,
) -> str:
    """The report; `color` applies to text only, `options` (e.g. `summary=False`) go to the emitter."""
    if format not in EMITTERS:
        raise ValueError(f"unknown format {format!r}; expected one of {', '.join(FORMATS)}")
    module, function = EMITTERS[format]
    emit = getattr(import_module(f"{__name__}.{module}"), function)
    if format == "text":
        return emit(diagnostics, sources, color, **options)
    return emit(diagnostics, sources, **options)


def wants_color(stream: TextIO) -> bool:
    """Colour by default only on a terminal, and never when NO_COLOR is set (no-color.org) or TERM is dumb."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
