"""One source line → the text a terminal shows for it, and where each character lands.

Carets must sit under the right characters even after the line is changed for
display: secrets masked (shorter), tabs expanded, wide characters counted
twice, control and bidi characters replaced (a spec must not be able to
drive the terminal), and very long lines cut to a window around the span.
"""

from __future__ import annotations

import unicodedata
from typing import Sequence

from plait.core.record import Record, record

from .mask import ELLIPSIS, mask

__all__ = ["LineView", "clean", "view_line", "window"]

#: Characters of one line shown at most; a 1 MB line becomes a window around the span.
MAX_WIDTH = 160
#: How much of the line before the span a window keeps.
CONTEXT = 40

_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_REPLACEMENT = "\ufffd"


def _shown(ch: str) -> str:
    if ch == "\t":
        return "    "
    if ch in _BIDI or unicodedata.category(ch) == "Cc":
        return _REPLACEMENT
    return ch


def _width(text: str) -> int:
    width = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        width += 2 if unicodedata.east_asian_width(ch) in "WF" else 1
    return width


def clean(text: str, newlines: bool = False) -> str:
    """Message text safe to print: no control or bidi characters (line breaks kept if `newlines`)."""
    if text.isprintable():
        return text
    keep = "\n\r" if newlines else ""
    return "".join(ch if ch in keep else " " if ch in "\t\n\r" else _shown(ch) for ch in text)


@record(kw_only=False)
class LineView(Record):
    text: str
    #: Display column of each character index from `start` to `start + len(columns) - 1`.
    columns: Sequence[int]
    start: int

    def column(self, index: int) -> int:
        """The display column of character `index` of the original line (clamped to the window)."""
        i = min(max(index - self.start, 0), len(self.columns) - 1)
        return self.columns[i]


def window(length: int, focus: int) -> tuple[int, int]:
    """The [lo, hi) character range of a line of `length` shown to keep character `focus` in view."""
    if length <= MAX_WIDTH:
        return 0, length
    lo = max(0, min(focus - CONTEXT, length - MAX_WIDTH))
    return lo, lo + MAX_WIDTH


def view_line(text: str, masks: list[tuple[int, int]], focus: int) -> LineView:
    """Show `text` with `masks` (sorted, merged ranges) hidden, keeping character `focus` in view."""
    lo, hi = window(len(text), focus)
    segment = text[lo:hi]
    if segment.isascii() and segment.isprintable() and not any(s < hi and e > lo for s, e in masks):
        # The common line: every character one column wide, nothing to hide.
        head = ELLIPSIS if lo > 0 else ""
        tail = ELLIPSIS if hi < len(text) else ""
        return LineView(head + segment + tail, range(len(head), len(head) + len(segment) + 1), lo)
    pieces: list[str] = []
    columns: list[int] = []
    col = 0
    if lo > 0:
        pieces.append(ELLIPSIS)
        col = 1
    starts = dict(masks)
    skip_to = lo
    for start, end in masks:
        if start < lo < end:  # the window opens inside a secret: show none of it
            pieces.append(ELLIPSIS)
            col += 1
            skip_to = end
    for i in range(lo, hi):
        columns.append(col)
        if i < skip_to:
            continue
        if i in starts:
            piece = mask(text[i : starts[i]])
            skip_to = starts[i]
        else:
            piece = _shown(text[i])
        pieces.append(piece)
        col += _width(piece)
    columns.append(col)
    if hi < len(text):
        pieces.append(ELLIPSIS)
    return LineView("".join(pieces), tuple(columns), lo)
