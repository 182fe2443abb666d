"""Text → AST for one file.

`parse_module(source)` never raises on bad input: it returns the module (or
None) and a list of diagnostics. Valid text is parsed by the fast path: the
lexer in `plait.dsl.lexer` and the table-driven parser in `plait.dsl.lalr`,
both reading tables generated from the grammar by lark, so checking a valid
spec never imports lark. When the fast path finds no parse, lark itself
parses the text (`plait.dsl.lark_parse`) and its errors become diagnostics:
only the first error of each top-level declaration, so one broken block
does not bury the rest.
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from functools import cache
from typing import Any, Iterator

from . import ast
from plait.core.diagnostics import Diagnostic
from .lalr import ParseMismatch, TableParser
from .lexer import Lexer, LexMismatch
from plait.core.source import SourceFile, span_of
from .transformer import AstBuilder, NumberError, StringError

__all__ = ["MAX_NESTING", "MAX_SYNTAX_ERRORS", "collector_paused", "parse_module"]

#: Brackets deeper than this are an error, which bounds recursion everywhere downstream.
MAX_NESTING = 64
#: Syntax errors reported per file at most: each costs a re-parse and a lark
#: error analysis (~1 ms), and past a hundred they are noise.
MAX_SYNTAX_ERRORS = 100

_Comment = ast.constructor(ast.Comment)
#: What the builder's spans point into between parses (not the last text parsed, which it would keep alive).
_NOTHING = SourceFile("<string>", "")
_Module = ast.constructor(ast.Module)


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


class _FastParser:
    """The generated tables' lexer and parser, with the AST builder; a lock guards the builder's file name."""

    def __init__(self) -> None:
        from plait.grammars import plait_tables

        self.builder = AstBuilder("<string>")
        self.lexer = Lexer(plait_tables, MAX_NESTING)
        self.table = TableParser(plait_tables, self.builder)
        self.lock = threading.Lock()

    def parse(self, source: SourceFile) -> tuple[Any, list[tuple[int, int, int, int]]] | None:
        """((version, declarations), comments as (offset, end, line, column)), or None when
        the text needs lark's diagnosis (a syntax error, a bad escape or number)."""
        with self.lock, collector_paused():
            self.builder.file, self.builder.source, self.builder.origin = source.path, source, source
            try:
                comments: list[tuple[int, int, int, int]] = []
                return self.table.parse(self.lexer.stream(source.text, comments)), comments
            except (LexMismatch, ParseMismatch, StringError, NumberError):
                return None
            finally:
                self.builder.source, self.builder.origin = None, _NOTHING


@cache
def _get_parser() -> _FastParser:
    return _FastParser()


def parse_module(source: SourceFile) -> tuple[ast.Module | None, list[Diagnostic]]:
    parsed = _get_parser().parse(source)
    if parsed is not None:
        (version, decls), comments = parsed
    else:
        from . import lark_parse

        result, diagnostics = lark_parse.parse(source)
        if result is None:
            return None, diagnostics
        # lark accepted what the fast path did not: lark is the reference.
        version, decls = result
        comments = [
            (start, end, (at := source.position(start)).line, at.column) for start, end in lark_parse.comments(source)
        ]
    path, text = source.path, source.text
    module = _Module(
        span=source.span(0, len(text)),
        file=path,
        version=version,
        declarations=decls,
        comments=tuple(_Comment(span=span_of(source, start, end), text=text[start:end]) for start, end, *_ in comments),
    )
    return module, []
