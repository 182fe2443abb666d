"""A template string → its `{{ path }}` placeholders, each with its source span.

The syntax is the runtime's (`plait.runtime.templates`): `\\{{` is a literal
brace, a path is dotted names, and anything else between the braces is an
expression (`problem` "expression": typed by src/plait/compiler/expressions.py).
Unclosed and empty placeholders are kept (with `problem` set) so the template
rule can report them.
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import Iterator

from plait.dsl import ast
from plait.core.source import SourceFile, Span

__all__ = ["Placeholder", "placeholders", "scan"]

_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*")


class Placeholder:
    """One `{{ ... }}` of a string, equal to another by (path, problem, string, nth). A plain class:
    `@dataclass(frozen=True)` wrote six methods with `exec` at every start of a check (~0.8 ms)."""

    def __init__(
        self,
        path: str,
        problem: str | None,
        string: ast.String,
        nth: int,
        sources: dict[str, SourceFile],
        shared: _Offsets | None = None,
    ) -> None:
        #: The dotted path, or the text between the braces (stripped) when `problem` is set.
        self.path = path
        #: None, "expression" (more than a dotted path), "unclosed" (no `}}`) or "invalid" (nothing between them).
        self.problem = problem
        self.string = string
        #: Which placeholder of the string this is: the key for finding it in the source.
        self.nth = nth
        self.sources = sources
        #: The string's source offsets, worked out once for all its placeholders (per placeholder it was quadratic).
        self.shared = shared

    def _key(self) -> tuple:
        return self.path, self.problem, self.string, self.nth

    def __eq__(self, other: object) -> bool:
        return self._key() == other._key() if isinstance(other, Placeholder) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Placeholder(path={self.path!r}, problem={self.problem!r}, string={self.string!r}, nth={self.nth!r})"

    @property
    def parts(self) -> list[str]:
        return self.path.split(".")

    @cached_property
    def span(self) -> Span:
        """Where the path is written; computed only for placeholders that get reported."""
        shared = self.shared if self.shared is not None else _Offsets(self.string, self.sources)
        found = shared.spans
        return found[self.nth] if found is not None else self.string.span

    def part(self, start: int, end: int) -> Span:
        """Where `path[start:end]` is written (a path inside an expression); the whole placeholder if unknown."""
        shared = self.shared if self.shared is not None else _Offsets(self.string, self.sources)
        bounds = shared.bounds
        source = self.sources.get(self.string.span.file)
        if bounds is None or source is None:
            return self.string.span
        offset = bounds[self.nth][0]
        return source.span(offset + start, offset + end)


class _Offsets:
    """One string's placeholder spans in its source, scanned once on first use."""

    def __init__(self, string: ast.String, sources: dict[str, SourceFile]) -> None:
        self.string = string
        self.sources = sources

    @cached_property
    def bounds(self) -> list[tuple[int, int]] | None:
        """Each placeholder's (start, end) offsets in the source, or None when escapes moved them."""
        string = self.string
        source = self.sources.get(string.span.file)
        if source is None:
            return None
        quote = 3 if string.block else 1
        body_start = string.span.offset + quote
        raw = list(scan(source.text[body_start : string.span.end_offset - quote]))
        # The raw text maps one-to-one onto the value unless escapes moved a brace.
        if [(p, q) for _, _, p, q in raw] != [(p, q) for _, _, p, q in scan(string.value)]:
            return None
        return [(body_start + a, body_start + b) for a, b, _, _ in raw]

    @cached_property
    def spans(self) -> list[Span] | None:
        bounds = self.bounds
        source = self.sources.get(self.string.span.file)
        if bounds is None or source is None:
            return None
        return [source.span(a, b) for a, b in bounds]


def is_path(text: str) -> bool:
    """Whether `text` is a plain dotted path (`plan.tasks`), not an expression."""
    return _PATH.fullmatch(text) is not None


def scan(text: str) -> Iterator[tuple[int, int, str, str | None]]:
    """(start, end, path, problem) with offsets into `text`; the range covers the path only."""
    i = 0
    while (j := text.find("{{", i)) >= 0:
        if j > 0 and text[j - 1] == "\\":
            i = j + 2
            continue
        k = text.find("}}", j + 2)
        if k < 0:
            yield j, j + 2, "{{", "unclosed"
            return
        inner = text[j + 2 : k]
        start = j + 2 + len(inner) - len(inner.lstrip())
        path = inner.strip()
        if _PATH.fullmatch(path):
            yield start, start + len(path), path, None
        elif path:
            yield start, start + len(path), path, "expression"
        else:
            yield j, k + 2, inner, "invalid"
        i = k + 2


def placeholders(string: ast.String, sources: dict[str, SourceFile]) -> list[Placeholder]:
    if "{{" not in string.value:
        return []
    shared = _Offsets(string, sources)
    return [
        Placeholder(path, problem, string, n, sources, shared)
        for n, (_, _, path, problem) in enumerate(scan(string.value))
    ]
