"""Source text → positions: SourceFile, Position and Span.

Lines and columns are 1-based (what editors show), offsets 0-based, ends
exclusive. Columns count code points, as lark does.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate
from dataclasses import FrozenInstanceError, field
from pathlib import Path
from typing import Any, Iterator, Protocol

from .record import Record, record

__all__ = ["Position", "SourceFile", "Span", "span_of"]


@record(kw_only=False)
class Position(Record):
    line: int
    column: int
    offset: int


class _Origin(Protocol):
    """Where a span's lines and columns come from: its file's line index, or the positions it was given."""

    @property
    def path(self) -> str: ...

    def locate(self, offset: int, end: bool) -> tuple[int, int]: ...


class _Given:
    """The origin of a span made from explicit positions (a file that could not be read, a stand-in)."""

    __slots__ = ("path", "start", "stop")

    def __init__(self, path: str, start: tuple[int, int], stop: tuple[int, int]) -> None:
        self.path, self.start, self.stop = path, start, stop

    def locate(self, offset: int, end: bool) -> tuple[int, int]:
        return self.stop if end else self.start


class Span:
    """A range of one source file. `file` is the path as the user gave it (or "<string>").

    The parser makes one per AST node, so a span is three slots: its origin, its offset and its length. Lines
    and columns are read from the file's line index when asked for (diagnostics, the formatter, the editor):
    with all seven kept, spans were two thirds of a dense spec's memory (2 million `a=1,` attributes in 8 MB
    took 1.7 GB). `Span(file, line, column, end_line, end_column, offset, end_offset)` makes one from
    positions given; `SourceFile.span(offset, end_offset)` one that reads them from its file. Spans compare,
    hash and pickle by their seven values, whichever way they were made.
    """

    __slots__ = ("_origin", "offset", "_length")
    _origin: _Origin
    offset: int
    _length: int

    def __init__(
        self, file: str, line: int, column: int, end_line: int, end_column: int, offset: int = 0, end_offset: int = 0
    ) -> None:
        _set_origin(self, _Given(file, (line, column), (end_line, end_column)))
        _set_offset(self, offset)
        _set_length(self, end_offset - offset)

    # Immutable, as the named tuple was: spans are dict keys and set members.
    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    @property
    def file(self) -> str:
        return self._origin.path

    @property
    def end_offset(self) -> int:
        return self.offset + self._length

    @property
    def line(self) -> int:
        return self._origin.locate(self.offset, False)[0]

    @property
    def column(self) -> int:
        return self._origin.locate(self.offset, False)[1]

    @property
    def end_line(self) -> int:
        return self._origin.locate(self.offset + self._length, True)[0]

    @property
    def end_column(self) -> int:
        return self._origin.locate(self.offset + self._length, True)[1]

    @property
    def start(self) -> Position:
        return Position(*self._origin.locate(self.offset, False), self.offset)

    @property
    def end(self) -> Position:
        end = self.offset + self._length
        return Position(*self._origin.locate(end, True), end)

    def to(self, other: Span) -> Span:
        """The span from the start of self to the end of other."""
        if other._origin is self._origin:
            return span_of(self._origin, self.offset, other.offset + other._length)
        (line, column), (end_line, end_column) = self._origin.locate(self.offset, False), other.end_position()
        return Span(self.file, line, column, end_line, end_column, self.offset, other.end_offset)

    def end_position(self) -> tuple[int, int]:
        return self._origin.locate(self.offset + self._length, True)

    def values(self) -> tuple[str, int, int, int, int, int, int]:
        """(file, line, column, end_line, end_column, offset, end_offset)."""
        origin, offset, end = self._origin, self.offset, self.offset + self._length
        return (origin.path, *origin.locate(offset, False), *origin.locate(end, True), offset, end)

    # Read as the named tuple of those seven values it used to be (`file, line, *_ = span`, `span[1:5]`).
    def __iter__(self) -> Iterator[str | int]:
        return iter(self.values())

    def __getitem__(self, index: int | slice) -> Any:
        return self.values()[index]

    def __len__(self) -> int:
        return 7

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Span):
            return NotImplemented
        if other._origin is self._origin:
            return self.offset == other.offset and self._length == other._length
        return self.values() == other.values()

    def __hash__(self) -> int:
        # Equal spans have equal files and offsets however they were made; lines need no lookup here.
        return hash((self._origin.path, self.offset, self._length))

    def __reduce__(self) -> tuple:
        # Pickled (and copied) as its values: a copy need not carry the file's text.
        return Span, self.values()

    def __repr__(self) -> str:
        names = ("file", "line", "column", "end_line", "end_column", "offset", "end_offset")
        return f"Span({', '.join(f'{n}={v!r}' for n, v in zip(names, self.values()))})"

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


_new_span = object.__new__
# The slots' own setters, past the frozen __setattr__ (as records are built: plait.core.record).
_set_origin = Span.__dict__["_origin"].__set__
_set_offset = Span.__dict__["offset"].__set__
_set_length = Span.__dict__["_length"].__set__


def span_of(origin: _Origin, offset: int, end_offset: int) -> Span:
    """A span of `origin` (a SourceFile), unchecked: the parser's, once per node."""
    span = _new_span(Span)
    _set_origin(span, origin)
    _set_offset(span, offset)
    _set_length(span, end_offset - offset)
    return span


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

    def locate(self, offset: int, end: bool = False) -> tuple[int, int]:
        """(line, column) of an offset (clamped to the text)."""
        offset = max(0, min(offset, len(self.text)))
        starts = self._starts()
        line = bisect_right(starts, offset)
        return line, offset - starts[line - 1] + 1

    def position(self, offset: int) -> Position:
        offset = max(0, min(offset, len(self.text)))
        return Position(*self.locate(offset), offset)

    def span(self, offset: int, end_offset: int) -> Span:
        """The span of `text[offset:end_offset]`, its lines and columns read from this file when asked for."""
        offset = max(0, min(offset, len(self.text)))
        return span_of(self, offset, max(offset, min(end_offset, len(self.text))))

    @property
    def line_count(self) -> int:
        return len(self._starts())
