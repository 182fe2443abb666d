"""Text → the tokens the parser reads: the one lexer, over the grammar's own terminals.

It takes the terminals from the generated parser (`plait.grammars.plait_parser`, lark's standalone module) and
matches them in the order lark documents for its basic lexer (priority, then the longest match a pattern can
make, then the pattern's length, then the name), with one compiled pattern; a string terminal a regexp
terminal matches whole (`agent` for NAME) is a keyword, found through the regexp and renamed. It folds
separators as the grammar expects: newlines (`_SEP`) and commas between block members become one `_SEP`,
and newlines elsewhere are dropped. A character no terminal matches raises `BadCharacter`, brackets nested
deeper than the limit raise `NestingTooDeep`; `plait.dsl.syntax_errors` turns both into diagnostics.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

__all__ = ["IGNORED", "BadCharacter", "Lexer", "NestingTooDeep", "Token"]

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


class BadCharacter(Exception):
    """No terminal matches the text at `offset`."""

    def __init__(self, offset: int) -> None:
        super().__init__(f"no token matches at offset {offset}")
        self.offset = offset


class NestingTooDeep(Exception):
    """An opening bracket (`token`) past the nesting limit."""

    def __init__(self, token: Token) -> None:
        super().__init__("brackets nested too deeply")
        self.token = token


#: Terminal patterns whose repeated group makes `re` keep one backtracking entry per repetition: 2 MB of
#: blank lines cost 800 MB and 9 s. Nothing in the same terminal follows the group but a delimiter the group
#: cannot match, so the possessive form (Python 3.11) matches exactly the same text, in constant memory.
LINEAR_FORMS = {
    "(\r?\n)+": "(?:\r?\n)++",
    '"[^"\\\\\n\r]*(?:\\\\.[^"\\\\\n\r]*)*"': '"[^"\\\\\n\r]*+(?:\\\\.[^"\\\\\n\r]*+)*+"',
}


#: The grammar's `%ignore`d terminals (a test holds this to lark's lexing of the grammar).
IGNORED = frozenset({"WS", "COMMENT"})


class Lexer:
    def __init__(self, parser: Any, max_nesting: int) -> None:
        """The lexer for `parser`, the generated module's Lark instance (its `terminals`)."""
        terminals = sorted(
            parser.terminals,
            key=lambda t: (-t.priority, -t.pattern.max_width, -len(t.pattern.value), t.name),
        )
        regexps = [t for t in terminals if t.pattern.type == "re"]
        # A word some pattern terminal of at least its priority matches whole is a keyword. The patterns are
        # one alternation per priority (fullmatch backtracks into each alternative): one compile, not one a
        # pattern, which was half of making the lexer.
        matchers: dict[int, re.Pattern[str]] = {}
        self.keywords: dict[str, str] = {}
        kept: list[tuple[str, str]] = []
        for term in terminals:
            if term.pattern.type == "str":
                matcher = matchers.get(term.priority)
                if matcher is None:
                    either = "|".join(f"(?:{r.pattern.to_regexp()})" for r in regexps if r.priority >= term.priority)
                    matcher = matchers[term.priority] = re.compile(either or "(?!)")
                if matcher.fullmatch(term.pattern.value):
                    self.keywords[term.pattern.value] = term.name
                    continue
            kept.append((term.name, term.pattern.to_regexp()))
        alternatives = "|".join(f"(?P<{name}>{LINEAR_FORMS.get(regexp, regexp)})" for name, regexp in kept)
        # Blanks before a token are taken in the same match (a third of all
        # matches were blanks). No terminal starts with one, so this splits the
        # text exactly where matching blanks on their own would; trailing blanks still match alone.
        blank = parser.get_terminal("WS").pattern.to_regexp()
        self.pattern = re.compile(f"(?:{blank})?(?:{alternatives})")
        self.ignore = IGNORED
        # Separators before these are line breaks inside one construct: `}`, `{`, `->`, `|`.
        self.glue = frozenset(
            {"RBRACE", "LBRACE", *(t.name for t in parser.terminals if t.pattern.value in ("->", "|"))}
        )
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
                raise BadCharacter(pos)
            kind = m.lastgroup
            assert kind is not None  # every alternative of the pattern is a named group
            start, end = m.span(kind)
            pos = end
            if kind in ignore:
                if kind == "COMMENT":
                    comments.append((start, end, line, start - line_start + 1))
                continue
            column = start - line_start + 1
            if kind == "_SEP" or (kind == "COMMA" and stack and stack[-1] == "LBRACE"):
                # Newlines, and commas between block members: one separator at most, and only in a block.
                value = text[start:end]
                first_line = line
                if kind == "_SEP":
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
                    raise NestingTooDeep(tok)
                stack.append(kind)
            elif kind in _CLOSERS and stack and _OPENERS[stack[-1]] == kind:
                stack.pop()
            last_type = kind
            yield tok
        if pos != len(text):
            raise BadCharacter(pos)
