"""The lexer's and the parser's errors → syntax diagnostics that say what was expected and which
block is still open ("expected `}` to close `agent writer` opened at 3:9")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Iterator

from plait.core.diagnostics import Diagnostic, Fix, Label, Severity
from .lexer import _CLOSERS, _OPENERS, BadCharacter, NestingTooDeep, Token
from .parser import UnexpectedToken
from plait.core.source import SourceFile
from .transformer import NumberError, StringError
from plait.core.codes import declare

# The codes this module raises; their documentation is explain/<code>.md beside it.
P001 = declare("P001", "syntax-error", Severity.ERROR, "the text does not follow the grammar")
P002 = declare("P002", "invalid-token", Severity.ERROR, "a character or literal the lexer cannot read")
P003 = declare("P003", "invalid-escape", Severity.ERROR, "a string escape that is not a JSON escape")
P004 = declare("P004", "nesting-too-deep", Severity.ERROR, "brackets nested deeper than the parser allows")

__all__ = [
    "DECLARATION_TERMINALS",
    "NestingTooDeep",
    "OpenBracket",
    "syntax_diagnostic",
    "tracking_brackets",
]


@dataclass(frozen=True, slots=True)
class OpenBracket:
    kind: str  # LBRACE, LSQB or LPAR
    token: Token
    #: The declaration being parsed when it opened: "agent writer".
    owner: str


#: Tokens after which a top-level keyword is a name (`chain c = a -> loop`), not a declaration.
_NAME_AFTER = frozenset({"__ANON_0", "EQUAL", "LPAR", "COMMA", "ON", "DOT"})


def tracking_brackets(tokens: Iterable[Any], stack: list[OpenBracket]) -> Iterator[Any]:
    """`tokens`, passed on unchanged, keeping in `stack` the brackets open so far and the declaration that
    opened each ("agent writer", "`output` block of `step classify`"), for the messages of a syntax error."""
    owner = ""
    naming = False
    last_type = last_value = ""
    for tok in tokens:
        kind = tok.type
        if kind == "_SEP":  # a separator the lexer folded: not a token a declaration is read from
            yield tok
            continue
        if kind in _OPENERS:
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


_CLOSE = {"LBRACE": "}", "LSQB": "]", "LPAR": ")"}
_OPEN = {"LBRACE": "{", "LSQB": "[", "LPAR": "("}

_DESCRIBE = {
    "NAME": "a name",
    "STRING": "a string",
    "LONG_STRING": "a string",
    "NUMBER": "a number",
    "DURATION": "a duration",
    "SIZE": "a size",
    "COMPARE": "a comparison (`==`, `!=`, `<`, `<=`, `>`, `>=`)",
    "_SEP": "a newline or `,`",
    "COMMA": "`,`",
    "$END": "the end of the file",
}
_KEYWORDS = {
    "PLAIT": "plait",
    "MODEL": "model",
    "TOOL": "tool",
    "AGENT": "agent",
    "STEP": "step",
    "CHAIN": "chain",
    "PARALLEL": "parallel",
    "CONSOLIDATE": "consolidate",
    "IMPORT": "import",
    "PARAMS": "params",
    "SUCCEEDED": "succeeded",
    "TRUE": "true",
    "FALSE": "false",
    "INPUT": "input",
    "STATE": "state",
    "OUTPUT": "output",
    "ANSWER": "answer",
    "ROUTE": "route",
    "LOOP": "loop",
    "MAP": "map",
    "ASK": "ask",
    "MCP": "mcp",
    "TEST": "test",
    "EXPECT": "expect",
    "THREAD": "thread",
    "TYPE": "type",
    "WITH": "with",
    "ON": "on",
    "ELSE": "else",
    "NOT": "not",
    "AND": "and",
    "OR": "or",
}
_PUNCT = {
    "LBRACE": "{",
    "RBRACE": "}",
    "LSQB": "[",
    "RSQB": "]",
    "LPAR": "(",
    "RPAR": ")",
    "QMARK": "?",
    "EQUAL": "=",
    "COLON": ":",
    "VBAR": "|",
    "__ANON_0": "->",
    "DOT": ".",
}
#: The terminals that start a top-level declaration: the one list error recovery and bracket owners read too.
DECLARATION_TERMINALS = frozenset(
    {
        "MODEL",
        "TOOL",
        "AGENT",
        "STEP",
        "CHAIN",
        "PARALLEL",
        "CONSOLIDATE",
        "IMPORT",
        "INPUT",
        "STATE",
        "ROUTE",
        "LOOP",
        "MAP",
        "ASK",
        "MCP",
        "TEST",
        "TYPE",
        "THREAD",
    }
)
_VALUES = {"STRING", "LONG_STRING", "NUMBER", "DURATION", "SIZE", "TRUE", "FALSE", "NAME", "LSQB", "LBRACE"}
#: Keywords the grammar also takes as a name (an attribute key, a parameter, mostly a declared name).
_NAMELIKE = set(_KEYWORDS) - {"SUCCEEDED"}
_TYPED_BLOCKS = {"PARAMS", "OUTPUT", "ANSWER"}
_CASE_LABELS = {"STRING", "NUMBER", "TRUE", "FALSE", "ELSE"}
_OPERATORS = {"AND", "OR", "COMPARE"}


def _describe(name: str) -> str:
    if name in _DESCRIBE:
        return _DESCRIBE[name]
    if name in _KEYWORDS:
        return f"`{_KEYWORDS[name]}`"
    if name in _PUNCT:
        return f"`{_PUNCT[name]}`"
    return name.lower()


def _describe_token(token: Any) -> str:
    if token.type == "$END":
        return "end of file"
    if token.type in ("NAME",):
        return f"name `{token}`"
    if token.type in ("STRING", "LONG_STRING"):
        return "string"
    if token.type == "_SEP":
        return "newline" if "\n" in str(token) else "`,`"
    if token.type in ("NUMBER", "DURATION"):
        return f"{token.type.lower()} `{token}`"
    return f"`{token}`"


def _expected(expected: set[str]) -> str:
    names = set(expected)  # narrowed below; the caller's set stays whole
    if names & {"_SEP", "RBRACE", "RSQB"} and names - _OPERATORS:
        # After any value a condition could go on; that is seldom what was meant.
        names -= _OPERATORS
    phrases: list[str] = []
    if _CASE_LABELS <= names and "LSQB" not in names:
        # Inside `route ... { }`.
        phrases.append('a case (`"literal" -> runnable` or `else -> runnable`)')
        names -= _CASE_LABELS | {"LONG_STRING"}
        if "NAME" in names:  # a route's attribute (`budget = { ... }`) stands beside its cases
            phrases.append("an attribute (`budget = { ... }`)")
            names -= _NAMELIKE | {"NAME", "SUCCEEDED"}
    elif DECLARATION_TERMINALS <= names and "NAME" not in names:
        phrases.append(
            "a declaration (`model`, `tool`, `agent`, `step`, `chain`, `parallel`, `consolidate`, `import`,"
            " `input`, `state`, `route`, `loop`, `map`, `ask`, `mcp`, `test`, `type`, `thread`)"
        )
        names -= DECLARATION_TERMINALS
    elif _TYPED_BLOCKS <= names and "NAME" in names:
        # Where a block member starts.
        phrases.append("an attribute (`key = value`) or a `params`, `output`, `answer` or `with` block")
        names -= _NAMELIKE | {"NAME", "STRING", "LONG_STRING", "SUCCEEDED"}
    elif len(names) > 5 and len(names & _VALUES) >= 5:
        return "a value"
    elif "NAME" in names and "PARALLEL" in names:
        # A chain's, a loop's or a map's elements.
        phrases.append("a runnable name or `parallel(...)`")
        names -= _NAMELIKE | {"NAME"}
    elif "NAME" in names:
        # A keyword is accepted here only as a name: say "a name" once.
        names -= _NAMELIKE
    described = phrases + sorted({_describe(n) for n in names})
    if not described:
        return "nothing more"
    if len(described) == 1:
        return described[0]
    return ", ".join(described[:-1]) + " or " + described[-1]


def syntax_diagnostic(
    source: SourceFile,
    offset: int,
    end: int,
    exc: Exception,
    stack: list[OpenBracket],
    base: int = 0,
) -> Diagnostic:
    span = source.span(offset, max(end, offset))
    labels: list[Label] = []
    notes: list[str] = []
    fix = None

    if isinstance(exc, NestingTooDeep):
        return Diagnostic("P004", "nesting-too-deep", Severity.ERROR, "brackets are nested too deeply", span)
    if isinstance(exc, NumberError):
        return Diagnostic(
            "P002", "invalid-token", Severity.ERROR, f"number is too long ({end - offset} characters)", span
        )
    if isinstance(exc, StringError):
        return Diagnostic(
            "P003",
            "invalid-escape",
            Severity.ERROR,
            "invalid escape in string",
            span,
            notes=('strings use JSON escapes: \\n \\t \\" \\\\ \\uXXXX; `\\{{` writes literal braces',),
        )
    if isinstance(exc, BadCharacter):
        char = source.text[offset : offset + 1]
        if char == '"':
            message = "unterminated string"
            notes.append('a string ends with `"` on the same line; use `"""` for text over several lines')
        elif char == "\r":
            # Only LF and CRLF end lines; a lone CR (old Mac files) would otherwise hide in a comment.
            message = "carriage return without a line feed"
            notes.append("save the file with LF or CRLF line endings")
        elif char.isprintable() and char not in " \t":
            message = f"unexpected character `{char}`"
        else:
            message = f"unexpected character U+{ord(char):04X}" if char else "unexpected character"
        return Diagnostic("P002", "invalid-token", Severity.ERROR, message, span, notes=tuple(notes))

    expected = set(exc.expected) if isinstance(exc, UnexpectedToken) else set()
    token = exc.token if isinstance(exc, UnexpectedToken) else None
    found = _describe_token(token) if token is not None else "input"
    message = f"unexpected {found}, expected {_expected(expected)}"
    innermost = stack[-1] if stack else None
    if innermost is not None:
        assert innermost.token.start_pos is not None  # the lexer's tokens always carry their offset
        opened = source.position(innermost.token.start_pos + base)
        close, closer_name = _CLOSE[innermost.kind], _OPENERS[innermost.kind]  # "}", "RBRACE"
        owner = f" `{innermost.owner}`" if innermost.owner else ""
        if token is None or token.type == "$END" or expected == {closer_name}:
            message = (
                f"unexpected {found}: expected `{close}` to close{owner or ' the ' + repr(_OPEN[innermost.kind])}"
                f" opened at {opened.line}:{opened.column}"
            )
        elif owner:
            # Which block the parser was in: with several open, the innermost.
            message += f" inside{owner}"
        if token is None or innermost.token.start_pos != token.start_pos:
            where = source.span(opened.offset, opened.offset + 1)
            labels.append(Label(where, f"`{_OPEN[innermost.kind]}` opened here{owner and ' by' + owner}"))
        if token is not None and token.type == "$END":
            fix = Fix(f"add `{close}`")
    slip = _slip(source, offset, token) if token is not None else None
    if slip is not None:
        message, fix = slip
        span = fix.span or span  # the whole slip (`5sec`), not the token where parsing stopped
        labels.clear()  # the slip is the whole story: which block was open adds nothing to `write 5s`
    elif isinstance(exc, UnexpectedToken) and token is not None and token.type == "NAME" and "_SEP" in expected:
        notes.append("attributes in a block are separated by newlines or commas")
    return Diagnostic(
        "P001", "syntax-error", Severity.ERROR, message, span, labels=tuple(labels), notes=tuple(notes), fix=fix
    )


#: Units people write for durations → the unit plait spells (`5sec` → `5s`).
_DURATION_WORDS = {
    **dict.fromkeys(("sec", "secs", "second", "seconds"), "s"),
    **dict.fromkeys(("min", "mins", "minute", "minutes"), "m"),
    **dict.fromkeys(("hr", "hrs", "hour", "hours"), "h"),
    **dict.fromkeys(("msec", "msecs", "millis", "millisecond", "milliseconds"), "ms"),
}


def _slip(source: SourceFile, offset: int, token: Any) -> tuple[str, Fix] | None:
    """A common slip at the unexpected token, as (message, the fix that says the right spelling); else None."""
    text = source.text
    if token.type == "NAME" and str(token) in _DURATION_WORDS:
        number_end = offset
        while number_end > 0 and text[number_end - 1] in " \t":  # `5 seconds` as well as `5sec`
            number_end -= 1
        start = number_end
        while start > 0 and (text[start - 1].isdigit() or text[start - 1] == "."):
            start -= 1
        if start < number_end:
            written = text[start : offset + len(token)]
            right = text[start:number_end] + _DURATION_WORDS[str(token)]
            return (
                f"`{written}` is not a duration: durations are written with ms, s, m or h",
                Fix(f"write `{right}`", source.span(start, offset + len(token)), right),
            )
    if str(token) == "=" and text.startswith("=>", offset):
        return "`=>` is not an arrow in plait", Fix("write `->`", source.span(offset, offset + 2), "->")
    return None
