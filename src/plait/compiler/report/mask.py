"""Text that may hold a secret → the same text with every secret cut short.

Every emitter masks through this one module, so a secret is hidden the same
way in text, JSON, GitHub and SARIF output: the spans a diagnostic marks as
`redact`, the exact text under those spans wherever a message echoes it, and
anything that looks like a credential even when no rule flagged it (a key
pasted into a line that a diagnostic about something else happens to show).
What looks like a credential is core.redact's catalogue, the one P501 and the
graph use: a format one of them knew and the other did not leaked before.
"""

from __future__ import annotations

import re
from typing import Iterable, Mapping

from plait.core.diagnostics import Diagnostic
from plait.core.redact import merge as _merge
from plait.core.redact import secret_ranges
from plait.core.source import SourceFile

__all__ = ["ELLIPSIS", "Redactor", "mask", "mask_ranges", "secret_ranges"]

ELLIPSIS = "…"

#: A message quotes names and values from the spec; a 1 MB name must not make a 1 MB report.
MAX_QUOTE = 60
MAX_MESSAGE = 1000
_SEARCH_LIMIT = 64 * 1024
#: Every quoted run, left to right, closed or cut open by the length limit. Short
#: ones are matched too, so a closing backtick is never read as an opening one.
_QUOTE = re.compile(r"`([^`]*)(?:`|$)")


def _shorten_quote(match: re.Match) -> str:
    quoted = match.group(1)
    if len(quoted) <= MAX_QUOTE:
        return match.group(0)
    return f"`{quoted[:MAX_QUOTE]}{ELLIPSIS}`"


def mask(secret: str) -> str:
    """`sk-abcdef…` style: a prefix to recognise the value by, never enough to use it."""
    keep = min(4, len(secret) // 4)
    return secret[:keep] + ELLIPSIS


def mask_ranges(text: str, ranges: Iterable[tuple[int, int]]) -> str:
    out, last = [], 0
    for start, end in _merge(ranges):
        out.append(text[last:start])
        out.append(mask(text[start:end]))
        last = end
    out.append(text[last:])
    return "".join(out)


def _unquote(text: str, start: int, end: int) -> tuple[int, int]:
    """Shrink a string literal's span to its content, so the mask keeps the secret's own prefix."""
    for quote in ('"""', '"'):
        if end - start > 2 * len(quote) and text.startswith(quote, start) and text.endswith(quote, 0, end):
            return start + len(quote), end - len(quote)
    return start, end


class Redactor:
    """Masks one diagnostic's text and the source lines shown with it."""

    def __init__(self, diagnostic: Diagnostic, sources: Mapping[str, SourceFile]) -> None:
        #: file -> (start, end) positions of each redacted range, as (line, 0-based column).
        self._spans: dict[str, list[tuple[tuple[int, int], tuple[int, int]]]] = {}
        exact: set[str] = set()
        for span in diagnostic.redact:
            source = sources.get(span.file)
            if source is None:
                continue
            start, end = _unquote(source.text, span.offset, span.end_offset)
            if end <= start:
                continue
            a, b = source.position(start), source.position(end)
            self._spans.setdefault(span.file, []).append(((a.line, a.column - 1), (b.line, b.column - 1)))
            exact.add(source.text[start:end])
        # Longest first, so a secret that contains another is masked whole.
        self._exact = sorted(exact, key=len, reverse=True)

    def text(self, value: str) -> str:
        """A message, note or replacement with every secret masked and every quoted run kept short."""
        # Searching a 1 MB message would cost seconds; only a pathological one is cut before masking,
        # so quotes are shortened (and the text after them kept) with every secret already masked.
        value = value[:_SEARCH_LIMIT]
        ranges = secret_ranges(value)
        for secret in self._exact:
            start = value.find(secret)
            while start != -1:
                ranges.append((start, start + len(secret)))
                start = value.find(secret, start + len(secret))
        if ranges:
            value = mask_ranges(value, ranges)
        value = _QUOTE.sub(_shorten_quote, value)
        return value if len(value) <= MAX_MESSAGE else value[:MAX_MESSAGE] + ELLIPSIS

    def line_ranges(
        self, source: SourceFile, line: int, text: str, lo: int = 0, hi: int | None = None
    ) -> list[tuple[int, int]]:
        """Character ranges of source line `line` (its `text`; 0-based, end exclusive) to mask when shown.

        Only `text[lo:hi]` is searched for credential shapes: a huge line is shown
        through a window, and searching all of it would cost more than the check.
        """
        ranges = secret_ranges(text, lo, hi)
        for (first, start), (last, end) in self._spans.get(source.path, ()):
            if first <= line <= last:
                ranges.append((start if line == first else 0, end if line == last else len(text)))
        return _merge(ranges)
