"""Text the fast path refused → lark's own parse over grammars/plait.lark (the reference) and its error.

Valid text is parsed by the fast path (`plait.dsl.lexer` and `plait.dsl.lalr`,
driven by tables generated from this parser). This module is imported only
when that fails: lark parses the text again, and its exceptions (expected
tokens, the brackets still open) become the syntax diagnostics. It also
builds the parser the tables are generated from (`plait.dsl.tables`).
"""

from __future__ import annotations

import re
import threading
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any, Iterator, cast

from lark import Lark, Token
from lark.exceptions import LarkError, UnexpectedInput, UnexpectedToken

from plait.core.diagnostics import Diagnostic
from .lexer import _CLOSERS, _OPENERS
from .parser import MAX_NESTING, MAX_SYNTAX_ERRORS, collector_paused
from plait.core.source import SourceFile
from .syntax_errors import DECLARATION_TERMINALS, NestingTooDeep, OpenBracket, syntax_diagnostic
from .transformer import AstBuilder, NumberError, StringError

__all__ = ["FoldSeparators", "comments", "make_lark", "parse"]

_TYPED_BLOCKS = frozenset({"PARAMS", "OUTPUT", "ANSWER"})
#: Tokens after which a top-level keyword is a name (`chain c = a -> loop`), not a declaration.
_NAME_AFTER = frozenset({"__ANON_0", "EQUAL", "LPAR", "COMMA", "ON", "DOT"})


class FoldSeparators:
    """Post-lexer: newlines and commas between block members become one `_SEP`.

    Inside `[...]` and `(...)` newlines are insignificant; at top level every
    declaration starts with a keyword, so newlines there are dropped too. The
    stack of open brackets is kept for syntax errors ("`{` opened at 3:9 by
    `agent writer`").
    """

    always_accept = ("NL", "COMMA")

    def __init__(self) -> None:
        self.stack: list[OpenBracket] = []
        self.glue: frozenset[str] = frozenset()

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        stack = self.stack = []
        pending: Token | None = None
        last_type = last_value = ""
        owner = ""
        naming = False
        glue = self.glue
        for tok in stream:
            kind = tok.type
            top = stack[-1].kind if stack else None
            if kind == "NL" or (kind == "COMMA" and top == "LBRACE"):
                if top == "LBRACE" and last_type != "LBRACE" and pending is None:
                    pending = tok
                continue
            if pending is not None:
                if kind not in glue:
                    yield Token.new_borrow_pos("_SEP", str(pending), pending)
                pending = None
            if kind in _OPENERS:
                if len(stack) >= MAX_NESTING:
                    raise NestingTooDeep(tok)
                naming = False  # `input {`, `state {`: no name
                opened_by = owner
                if kind == "LBRACE" and last_type in _TYPED_BLOCKS and owner:
                    # Messages quote the owner: this reads "`output` block of `step classify`".
                    opened_by = f"{last_value}` block of `{owner}"
                stack.append(OpenBracket(kind, tok, opened_by))
            elif kind in _CLOSERS and stack and _OPENERS[stack[-1].kind] == kind:
                stack.pop()
            elif not stack:
                if naming:  # the word after a declaration's keyword is its name
                    naming = False
                    if kind not in ("STRING", "LONG_STRING"):
                        owner = f"{owner} {tok.value}"
                elif kind in DECLARATION_TERMINALS and last_type not in _NAME_AFTER:
                    owner, naming = tok.value, True
            last_type, last_value = kind, tok.value
            yield tok


def _grammar() -> str:
    import plait.grammars

    return (Path(plait.grammars.__file__).parent / "plait.lark").read_text(encoding="utf-8")


def make_lark(transformer: Any | None) -> Lark:
    """The plait grammar's LALR parser with its post-lexer; `transformer=None`
    gives lark's bare parse tree (the benchmark's reference)."""
    postlex = FoldSeparators()
    lark = Lark(
        _grammar(),
        parser="lalr",
        lexer="basic",
        postlex=postlex,
        transformer=transformer,
        maybe_placeholders=True,
        cache=True,
    )
    # Separators before these terminals are line breaks inside one construct.
    arrows = {t.name for t in lark.terminals if getattr(t.pattern, "value", None) in ("->", "|")}
    postlex.glue = frozenset({"RBRACE", "LBRACE", *arrows})
    return lark


#: What the builder's spans point into between parses (not the last text parsed, which it would keep alive).
_NOTHING = SourceFile("<string>", "")


class _LarkParser:
    """One Lark instance with its inline AST builder; a lock guards the builder's file name."""

    def __init__(self) -> None:
        self.builder = AstBuilder("<string>")
        self.lark = make_lark(self.builder)
        # make_lark installs a FoldSeparators; lark types the option as its PostLex, which that duck-types.
        self.postlex = cast(FoldSeparators, self.lark.options.postlex)
        self.lock = threading.Lock()

    def parse(self, text: str, file: str, source: SourceFile | None = None) -> Any:
        """Parse `text`; `source`, when `text` is that whole file, lets long lists keep offsets into it."""
        with self.lock, collector_paused():
            builder = self.builder
            builder.file, builder.source, builder.origin = file, source, source or SourceFile(file, text)
            try:
                return self.lark.parse(text)
            finally:
                builder.source, builder.origin = None, _NOTHING


@cache
def _get_parser() -> _LarkParser:
    return _LarkParser()


#: Everything a parse of bad text raises; each becomes a diagnostic.
_PARSE_ERRORS = (LarkError, StringError, NumberError, NestingTooDeep)

# A top-level declaration starts a line with its keyword; used to resynchronise after an error.
_DECL_START = re.compile(r"^(?:" + "|".join(sorted(t.lower() for t in DECLARATION_TERMINALS)) + r")\b", re.M)


def parse(source: SourceFile) -> tuple[Any, list[Diagnostic]]:
    """((version, declarations), []) or (None, the syntax diagnostics)."""
    parser = _get_parser()
    try:
        return parser.parse(source.text, source.path, source), []
    except _PARSE_ERRORS as exc:
        return None, _all_syntax_errors(parser, source, exc)


def comments(source: SourceFile) -> Iterator[tuple[int, int]]:
    """(offset, end) of each comment. Comments are not tokens lark's parser
    sees; they are found with the lexer's rule, skipping `#` inside strings."""
    if "#" not in source.text:
        return
    for match in _COMMENT_OR_STRING.finditer(source.text):
        if match.lastgroup == "comment":
            yield match.start(), match.end()


_COMMENT_OR_STRING = re.compile(
    r'(?P<long>"""(?s:.*?)""")|(?P<str>"[^"\\\n\r]*(?:\\.[^"\\\n\r]*)*")|(?P<comment>#[^\r\n]*)'
)


def _all_syntax_errors(parser: _LarkParser, source: SourceFile, first: Exception) -> list[Diagnostic]:
    """The first error, then the first error of every later declaration that fails on its own."""
    diagnostics = [_to_diagnostic(parser, source, first, 0)]
    first_offset = diagnostics[0].span.offset
    starts = [m.start() for m in _DECL_START.finditer(source.text)]
    # Resume at the first declaration after the one holding the first error.
    later = [s for s in starts if s > first_offset]
    for i, start in enumerate(later):
        if len(diagnostics) >= MAX_SYNTAX_ERRORS:
            last = diagnostics[-1]
            note = f"stopped after {MAX_SYNTAX_ERRORS} syntax errors; later declarations were not checked"
            diagnostics[-1] = replace(last, notes=(*last.notes, note))
            break
        end = later[i + 1] if i + 1 < len(later) else len(source.text)
        chunk = source.text[start:end]
        try:
            parser.parse(chunk, source.path)
        except _PARSE_ERRORS as exc:
            diagnostics.append(_to_diagnostic(parser, source, exc, start))
    return diagnostics


def _to_diagnostic(parser: _LarkParser, source: SourceFile, exc: Exception, base: int) -> Diagnostic:
    """Translate one exception raised while parsing text that starts at offset `base`."""
    if isinstance(exc, StringError | NumberError):
        offset = exc.span.offset + base
        return syntax_diagnostic(source, offset, offset + (exc.span.end_offset - exc.span.offset), exc, [])
    if isinstance(exc, NestingTooDeep):
        assert exc.token.start_pos is not None  # the lexer's tokens always carry their offset
        offset = exc.token.start_pos + base
        return syntax_diagnostic(source, offset, offset + 1, exc, [])
    stack = list(parser.postlex.stack)
    if isinstance(exc, UnexpectedToken) and exc.token.type == "$END":
        offset = len(source.text) if base == 0 else _chunk_end(source, base)
        return syntax_diagnostic(source, offset, offset, exc, stack, base)
    if isinstance(exc, UnexpectedInput):
        offset = (getattr(exc, "pos_in_stream", None) or 0) + base
        token = getattr(exc, "token", None)
        length = len(str(token)) if token is not None and isinstance(exc, UnexpectedToken) else 1
        return syntax_diagnostic(source, offset, offset + max(1, length), exc, stack, base)
    return syntax_diagnostic(source, base, base + 1, exc, stack, base)


def _chunk_end(source: SourceFile, base: int) -> int:
    match = _DECL_START.search(source.text, base + 1)
    end = match.start() if match else len(source.text)
    return len(source.text[:end].rstrip()) if end > base else end
