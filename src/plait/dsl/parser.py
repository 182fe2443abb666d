"""Text → AST for one file, or its syntax diagnostics.

`parse_module(source)` never raises on bad input: it returns the module (or None) and a list of diagnostics.
One lexer (`plait.dsl.lexer`) feeds one parser: the LALR parser lark's standalone tool generated from the
grammar (`plait.grammars.plait_parser`, driven through its public interactive parser, so lark itself is never
imported), which builds the AST inline (`plait.dsl.transformer`). On bad text the lexer's errors and the
parser's become the syntax diagnostics (`plait.dsl.syntax_errors`): the first error of each top-level
declaration, so one broken block does not bury the rest.
"""

from __future__ import annotations

import gc
import re
import threading
from contextlib import contextmanager
from dataclasses import replace
from functools import cache
from typing import TYPE_CHECKING, Any, Iterable, Iterator

from . import ast
from plait.core.diagnostics import Diagnostic
from .lexer import BadCharacter, Lexer, NestingTooDeep
from plait.core.source import SourceFile, span_of
from .transformer import AstBuilder, NumberError, StringError

if TYPE_CHECKING:
    from .syntax_errors import OpenBracket

__all__ = ["MAX_NESTING", "MAX_SYNTAX_ERRORS", "UnexpectedToken", "collector_paused", "keywords", "parse_module"]

#: Brackets deeper than this are an error, which bounds recursion everywhere downstream.
MAX_NESTING = 64
#: Syntax errors reported per file at most: each costs a re-parse of a declaration, and past a hundred they
#: are noise.
MAX_SYNTAX_ERRORS = 100

_Comment = ast.constructor(ast.Comment)
#: What the builder's spans point into between parses (not the last text parsed, which it would keep alive).
_NOTHING = SourceFile("<string>", "")
_Module = ast.constructor(ast.Module)
#: Comments as the lexer reports them: (offset, end, line, column).
Comments = list[tuple[int, int, int, int]]


class UnexpectedToken(Exception):
    """The parser has no action for `token` (a lexer token, or the `$END` after the last one)."""

    def __init__(self, token: Any, expected: Iterable[str]) -> None:
        super().__init__(f"unexpected {token.type} token")
        self.token = token
        self.expected = frozenset(expected)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for a parse (or a whole compile).

    A parse allocates about twenty objects per token and keeps most of them (the
    AST is acyclic), so the collector's full passes rescan an ever larger heap
    and find nothing: more than half the load time of a 100,000-line spec.
    Reference counting still frees everything; cycles wait for the next pass.
    Nested pauses leave the collector to the outermost.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class _Parser:
    """The generated parser with the AST builder inline, and the lexer; a lock guards the builder's file name."""

    def __init__(self) -> None:
        from plait.grammars import plait_parser

        self.builder = AstBuilder("<string>")
        self.lark = plait_parser.Lark_StandAlone(transformer=self.builder)
        self.lark_unexpected_token: type[Exception] = plait_parser.UnexpectedToken
        self.lexer = Lexer(self.lark, MAX_NESTING)
        self.lock = threading.Lock()

    def parse(
        self, text: str, file: str, source: SourceFile | None, comments: Comments, brackets: list[OpenBracket] | None
    ) -> Any:
        """(version, declarations) of `text`; `source`, when `text` is that whole file, lets long lists keep
        offsets into it. With `brackets`, the brackets open at an error are left in it (a little slower)."""
        with self.lock, collector_paused():
            builder = self.builder
            builder.file, builder.source, builder.origin = file, source, source or SourceFile(file, text)
            try:
                parser = self.lark.parse_interactive("")
                feed = parser.feed_token
                tokens = self.lexer.stream(text, comments)
                if brackets is not None:
                    from .syntax_errors import tracking_brackets

                    tokens = tracking_brackets(tokens, brackets)
                last = None
                try:
                    for last in tokens:
                        feed(last)
                    return parser.feed_eof(last)
                except self.lark_unexpected_token as exc:
                    token = exc.token  # type: ignore[attr-defined]
                    # As lark's own parse reports it: the terminals that would really have been taken here
                    # (`accepts`), else those the state has an action for.
                    raise UnexpectedToken(token, parser.accepts() or exc.expected) from exc  # type: ignore[attr-defined]
            finally:
                builder.source, builder.origin = None, _NOTHING


@cache
def _get_parser() -> _Parser:
    return _Parser()


def keywords() -> dict[str, str]:
    """The language's keywords: word → terminal (`agent` → AGENT)."""
    return dict(_get_parser().lexer.keywords)


def parse_module(source: SourceFile) -> tuple[ast.Module | None, list[Diagnostic]]:
    parser = _get_parser()
    comments: Comments = []
    try:
        version, decls = parser.parse(source.text, source.path, source, comments, None)
    except _SYNTAX_ERRORS as exc:
        return None, _all_syntax_errors(parser, source, exc)
    path, text = source.path, source.text
    module = _Module(
        span=source.span(0, len(text)),
        file=path,
        version=version,
        declarations=decls,
        comments=tuple(_Comment(span=span_of(source, start, end), text=text[start:end]) for start, end, *_ in comments),
    )
    return module, []


#: What the lexer, the builder and the parser raise on bad text.
_SYNTAX_ERRORS = (BadCharacter, NestingTooDeep, StringError, NumberError, UnexpectedToken)


@cache
def _declaration_start() -> re.Pattern[str]:
    """A top-level declaration starts a line with its keyword; used to resynchronise after an error."""
    from .syntax_errors import DECLARATION_TERMINALS

    return re.compile(r"^(?:" + "|".join(sorted(t.lower() for t in DECLARATION_TERMINALS)) + r")\b", re.M)


def _all_syntax_errors(parser: _Parser, source: SourceFile, first: Exception) -> list[Diagnostic]:
    """The first error, then the first error of every later declaration that fails on its own."""
    brackets = _brackets_at(parser, source.text, first.token) if isinstance(first, UnexpectedToken) else []
    diagnostics = [_to_diagnostic(source, first, brackets, 0)]
    first_offset = diagnostics[0].span.offset
    starts = [m.start() for m in _declaration_start().finditer(source.text)]
    # Resume at the first declaration after the one holding the first error.
    later = [s for s in starts if s > first_offset]
    for i, start in enumerate(later):
        if len(diagnostics) >= MAX_SYNTAX_ERRORS:
            last = diagnostics[-1]
            note = f"stopped after {MAX_SYNTAX_ERRORS} syntax errors; later declarations were not checked"
            diagnostics[-1] = replace(last, notes=(*last.notes, note))
            break
        end = later[i + 1] if i + 1 < len(later) else len(source.text)
        failed = _diagnose(parser, source.text[start:end], source, start)
        if failed is not None:
            diagnostics.append(failed)
    return diagnostics


def _diagnose(parser: _Parser, text: str, source: SourceFile, base: int) -> Any:
    """Parse `text` (at offset `base` of the file) again, keeping the open brackets: its error's diagnostic, or
    None when it parses."""
    brackets: list[OpenBracket] = []
    try:
        parser.parse(text, source.path, None, [], brackets)
    except _SYNTAX_ERRORS as exc:
        return _to_diagnostic(source, exc, brackets, base)
    return None


def _brackets_at(parser: _Parser, text: str, token: Any) -> list[OpenBracket]:
    """The brackets open when the parser stopped at `token`: the text lexed again up to it (lexing never
    fails before a token the parser was given)."""
    from .syntax_errors import tracking_brackets

    brackets: list[OpenBracket] = []
    for seen in tracking_brackets(parser.lexer.stream(text, []), brackets):
        if seen.start_pos == token.start_pos and seen.type == token.type:
            break
    return brackets


def _to_diagnostic(source: SourceFile, exc: Exception, stack: list[OpenBracket], base: int) -> Diagnostic:
    """Translate one exception raised while parsing text that starts at offset `base`."""
    from .syntax_errors import syntax_diagnostic

    if isinstance(exc, StringError | NumberError):
        offset = exc.span.offset + base
        return syntax_diagnostic(source, offset, offset + (exc.span.end_offset - exc.span.offset), exc, [])
    if isinstance(exc, NestingTooDeep):
        offset = exc.token.start_pos + base
        return syntax_diagnostic(source, offset, offset + 1, exc, [])
    if isinstance(exc, BadCharacter):
        offset = exc.offset + base
        return syntax_diagnostic(source, offset, offset + 1, exc, stack, base)
    assert isinstance(exc, UnexpectedToken)
    token = exc.token
    if token.type == "$END":
        offset = len(source.text) if base == 0 else _chunk_end(source, base)
        return syntax_diagnostic(source, offset, offset, exc, stack, base)
    offset = token.start_pos + base
    length = len(str(token))
    return syntax_diagnostic(source, offset, offset + max(1, length), exc, stack, base)


def _chunk_end(source: SourceFile, base: int) -> int:
    match = _declaration_start().search(source.text, base + 1)
    end = match.start() if match else len(source.text)
    return len(source.text[:end].rstrip()) if end > base else end
