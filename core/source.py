"""Source text → positions: SourceFile, Position and Span.

Lines and columns are 1-based (what editors show), offsets 0-based, ends
exclusive. Columns count code points, as lark does.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate
from dataclasses import field
from typing import NamedTuple
from pathlib import Path

from .record import Record, record

__all__ = ["Position", "SourceFile", "Span"]


@record(kw_only=False)
class Position(Record):
    line: int
    column: int
    offset: int


class Span(NamedTuple):
    """A range of one source file. `file` is the path as the user gave it (or "<string>").

    A named tuple rather than a frozen dataclass: the parser makes one per
    AST node, and a frozen dataclass's `__init__` costs five times as much.
    """

    file: str
    line: int
    column: int
    end_line: int
    end_column: int
    offset: int = 0
    end_offset: int = 0

    @property
    def start(self) -> Position:
        return Position(self.line, self.column, self.offset)

    @property
    def end(self) -> Position:
        return Position(self.end_line, self.end_column, self.end_offset)

    def to(self, other: "Span") -> "Span":
        """The span from the start of self to the end of other."""
        return Span(self.file, self.line, self.column, other.end_line, other.end_column, self.offset, other.end_offset)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


@record(kw_only=False)
class SourceFile(Record):
    """One file's text, with a line index built on first use."""

    path: str
    text: str
    _line_starts: list[int] = field(default_factory=list, compare=False, repr=False)

    @classmethod
    def read(cls, path: str | Path) -> "SourceFile":
        """Read a file as UTF-8. Raises OSError or UnicodeDecodeError; callers turn those into diagnostics."""
        data = Path(path).read_bytes()
        return cls(str(path), data.decode("utf-8"))

    def _starts(self) -> list[int]:
        if not self._line_starts:
            # One C-level split instead of a find() call per line: 2 MB of blank lines took 6 s the old way.
            starts = list(accumulate((len(line) + 1 for line in self.text.split("\n")), initial=0))
            starts.pop()  # the offset past the last line
            self._line_starts.extend(starts)
        return self._line_starts

    def line_text(self, line: int) -> str:
        starts = self._starts()
        if not 1 <= line <= len(starts):
            return ""
        start = starts[line - 1]
        end = starts[line] - 1 if line < len(starts) else len(self.text)
        return self.text[start:end].rstrip("\r")

    def position(self, offset: int) -> Position:
        offset = max(0, min(offset, len(self.text)))
        starts = self._starts()
        line = bisect_right(starts, offset)
        return Position(line, offset - starts[line - 1] + 1, offset)

    def span(self, offset: int, end_offset: int) -> Span:
        a, b = self.position(offset), self.position(end_offset)
        return Span(self.path, a.line, a.column, b.line, b.column, a.offset, b.offset)

    @property
    def line_count(self) -> int:
        return len(self._starts())
