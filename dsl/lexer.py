"""The fast path's lexer: text → the tokens lark's lexer and the
separator-folding post-lexer (`plait.dsl.lark_parse.FoldSeparators`) would
give the parser, in one pass and without importing lark.

It matches the grammar's own terminals (from the generated tables), in the
order lark's basic lexer tries them, with one compiled pattern. It does not
explain errors: on anything it cannot lex exactly as lark would (a character
no terminal matches, brackets nested too deep) it raises `LexMismatch`, and
the caller has lark parse the text, whose errors become the diagnostics.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

__all__ = ["LexMismatch", "Lexer", "Token"]

_OPENERS = {"LBRACE": "RBRACE", "LSQB": "RSQB", "LPAR": "RPAR"}
_CLOSERS = frozenset(_OPENERS.values())


class Token(str):
    """A token: its text, with the attributes lark's `Token` has."""

    __slots__ = ("type", "value", "start_pos", "line", "column", "end_line", "end_column", "end_pos")
    type: str
    value: str
    start_pos: int
    line: int
    column: int
    end_line: int
    end_column: int
    end_pos: int

    def __repr__(self) -> str:
        return f"Token({self.type!r}, {self.value!r})"


_new_str = str.__new__


def _token(
    kind: str, value: str, start: int, line: int, column: int, end_line: int, end_column: int, end: int
) -> Token:
    tok = _new_str(Token, value)
    tok.type, tok.value, tok.start_pos, tok.line, tok.column = kind, value, start, line, column
    tok.end_line, tok.end_column, tok.end_pos = end_line, end_column, end
    return tok


class LexMismatch(Exception):
    """The text is not lexically valid (or is nested too deep); let lark say why."""


#: Terminal patterns whose repeated group makes `re` keep one backtracking entry per repetition: 2 MB of
#: blank lines cost 800 MB and 9 s. Nothing in the same terminal follows the group but a delimiter the group
#: cannot match, so the possessive form (Python 3.11) matches exactly the same text, in constant memory.
LINEAR_FORMS = {
    "(\r?\n)+": "(?:\r?\n)++",
    '"[^"\\\\\n\r]*(?:\\\\.[^"\\\\\n\r]*)*"': '"[^"\\\\\n\r]*+(?:\\\\.[^"\\\\\n\r]*+)*+"',
}


class Lexer:
    def __init__(self, tables: Any, max_nesting: int) -> None:
        alternatives = "|".join(f"(?P<{name}>{LINEAR_FORMS.get(regexp, regexp)})" for name, regexp in tables.TERMINALS)
        # Blanks before a token are taken in the same match (a third of all
        # matches were blanks). No terminal starts with one, so this splits the
        # text exactly where lark does; trailing blanks still match on their own.
        self.pattern = re.compile(f"(?:{tables.BLANK})?(?:{alternatives})")
        self.keywords: dict[str, str] = tables.KEYWORDS
        self.ignore = frozenset(tables.IGNORE)
        self.glue = frozenset(tables.GLUE)
        self.max_nesting = max_nesting

    def tokens(self, text: str) -> tuple[list[Token], list[tuple[int, int, int, int]]]:
        """(the tokens the parser sees, comments as (offset, end, line, column))."""
        comments: list[tuple[int, int, int, int]] = []
        return list(self.stream(text, comments)), comments

    def stream(self, text: str, comments: list[tuple[int, int, int, int]]) -> Iterator[Token]:
        """The tokens one at a time, comments appended to `comments` as they pass.

        The parser consumes tokens as they come, so the text's tokens are never all alive at once: a list of
        400,000 numbers held 800,000 tokens (about half of the parse's memory) before the first reduce."""
        keywords, ignore, glue, max_nesting = self.keywords, self.ignore, self.glue, self.max_nesting
        stack: list[str] = []
        # A newline or comma that may become a `_SEP`: its _token() arguments.
        pending: tuple | None = None
        last_type = ""
        line, line_start, pos = 1, 0, 0
        for m in self.pattern.finditer(text):
            if m.start() != pos:
                raise LexMismatch(pos)
            kind = m.lastgroup
            assert kind is not None  # every alternative of the pattern is a named group
            start, end = m.span(kind)
            pos = end
            if kind in ignore:
                if kind == "COMMENT":
                    comments.append((start, end, line, start - line_start + 1))
                continue
            column = start - line_start + 1
            if kind == "NL" or (kind == "COMMA" and stack and stack[-1] == "LBRACE"):
                # Newlines, and commas between block members: FoldSeparators.process.
                value = text[start:end]
                first_line = line
                if kind == "NL":
                    line += value.count("\n")
                    line_start = start + value.rindex("\n") + 1
                if pending is None and last_type != "LBRACE" and stack and stack[-1] == "LBRACE":
                    pending = ("_SEP", value, start, first_line, column, line, end - line_start + 1, end)
                continue
            value = text[start:end]
            tok = _new_str(Token, value)
            tok.value, tok.start_pos, tok.line, tok.column, tok.end_pos = value, start, line, column, end
            if kind == "NAME":
                kind = keywords.get(value, kind)
            elif kind == "LONG_STRING" and "\n" in value:
                line += value.count("\n")
                line_start = start + value.rindex("\n") + 1
            tok.type, tok.end_line, tok.end_column = kind, line, end - line_start + 1
            if pending is not None:
                if kind not in glue:
                    yield _token(*pending)
                pending = None
            if kind in _OPENERS:
                if len(stack) >= max_nesting:
                    raise LexMismatch(start)
                stack.append(kind)
            elif kind in _CLOSERS and stack and _OPENERS[stack[-1]] == kind:
                stack.pop()
            last_type = kind
            yield tok
        if pos != len(text):
            raise LexMismatch(pos)
