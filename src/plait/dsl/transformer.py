"""Grammar rule callbacks → AST nodes, one method per grammar rule.

Runs inline in the LALR parser (no intermediate tree), so each method receives
its children already transformed: tokens for terminals, AST nodes for rules.
Spans are taken from the first and last child, which is why the grammar names
the tokens a construct starts and ends on. Tokens are `str` subclasses with
lark's token attributes (`plait.dsl.lexer.Token`).
"""

from __future__ import annotations

from sys import intern
from dataclasses import replace
from typing import Callable, Protocol, TypeVar, Union

from . import ast
from plait.core.source import SourceFile, Span, span_of

__all__ = ["AstBuilder", "Inline", "NumberError", "StringError", "decode_block_string", "decode_string"]

_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_SIZE_UNITS = {"B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3}
#: The helper rules lark makes for `("," value)*` (a list's or a call's items after the first: `__value_star_N`)
#: and `(_SEP _member)*` (a block's members after the first), and what each packs into past PACK_AFTER.
_PACKED: dict[str, type[ast.PackedItems | ast.PackedAttributes]] = {
    "__value_star": ast.PackedItems,
    "__block_star": ast.PackedAttributes,
}
#: Items a list keeps as plain nodes before the rest are packed (see `ast.PackedItems`): every list a person
#: writes stays a tuple of nodes; a machine-sized one costs bytes, not a node, per literal.
PACK_AFTER = 64

# The parser builds about one node per token: constructors without the frozen __init__'s cost.
_AgentDecl = ast.constructor(ast.AgentDecl)
_AskDecl = ast.constructor(ast.AskDecl)
_TestDecl = ast.constructor(ast.TestDecl)
_ThreadDecl = ast.constructor(ast.ThreadDecl)
_Expect = ast.constructor(ast.Expect)
_BoolOp = ast.constructor(ast.BoolOp)
_Compare = ast.constructor(ast.Compare)
_InputDecl = ast.constructor(ast.InputDecl)
_LoopDecl = ast.constructor(ast.LoopDecl)
_MapDecl = ast.constructor(ast.MapDecl)
_McpDecl = ast.constructor(ast.McpDecl)
_Not = ast.constructor(ast.Not)
_PathValue = ast.constructor(ast.PathValue)
_RouteCase = ast.constructor(ast.RouteCase)
_RouteDecl = ast.constructor(ast.RouteDecl)
_Size = ast.constructor(ast.Size)
_StateDecl = ast.constructor(ast.StateDecl)
_Attribute = ast.constructor(ast.Attribute)
_Block = ast.constructor(ast.Block)
_Bool = ast.constructor(ast.Bool)
_Call = ast.constructor(ast.Call)
_ChainDecl = ast.constructor(ast.ChainDecl)
_ChainRef = ast.constructor(ast.ChainRef)
_ConsolidateDecl = ast.constructor(ast.ConsolidateDecl)
_Duration = ast.constructor(ast.Duration)
_Ident = ast.constructor(ast.Ident)
_ImportDecl = ast.constructor(ast.ImportDecl)
_InlineParallel = ast.constructor(ast.InlineParallel)
_ListValue = ast.constructor(ast.ListValue)
_ModelDecl = ast.constructor(ast.ModelDecl)
_Number = ast.constructor(ast.Number)
_ParallelDecl = ast.constructor(ast.ParallelDecl)
_Param = ast.constructor(ast.Param)
_Params = ast.constructor(ast.Params)
_Ref = ast.constructor(ast.Ref)
_StepDecl = ast.constructor(ast.StepDecl)
_String = ast.constructor(ast.String)
_Succeeded = ast.constructor(ast.Succeeded)
_ToolDecl = ast.constructor(ast.ToolDecl)
_TypeExpr = ast.constructor(ast.TypeExpr)
_TypeDecl = ast.constructor(ast.TypeDecl)


def _name(tok: Token) -> str:
    """A name's text, one copy per distinct name: a spec says the same few names over and over (`str(tok)`
    copied each, a quarter of a dense spec's memory)."""
    return intern(tok.value)


class StringError(ValueError):
    """A string literal whose escapes are not valid JSON escapes."""

    def __init__(self, message: str, span: Span) -> None:
        super().__init__(message)
        self.span = span


class NumberError(ValueError):
    """A number literal with more digits than Python converts (int() stops at 4300)."""

    def __init__(self, span: Span) -> None:
        super().__init__("number is too long")
        self.span = span


def decode_string(raw: str) -> str:
    """`"..."` → its value. JSON escapes, plus `\\{` kept as is for the template engine."""
    body = raw[1:-1]
    if "\\" not in body:
        return body
    import json  # here, not at the top: most specs have no escape, and a check need not load it

    return json.loads('"' + body.replace("\\{", "\\\\{") + '"')


def decode_block_string(raw: str) -> str:
    """`\"\"\"...\"\"\"` → its value: drop the first newline, the common indentation
    and the trailing blank line. No escapes are processed."""
    # CRLF first: a `\r` left at a line's end would count as text when dedenting.
    body = raw[3:-3].replace("\r\n", "\n")
    if body.startswith("\n"):
        body = body[1:]
    head, sep, last = body.rpartition("\n")
    if sep and not last.strip():
        body = head
    import textwrap  # here, not at the top: a spec without block strings need not load it

    return textwrap.dedent(body)


class Token(Protocol):
    """What a span is read from on a token (`plait.dsl.lexer.Token`)."""

    value: str
    start_pos: int
    end_pos: int


#: What a span can be taken from: a token, a node (its span), or a span.
Spanned = Union[Token, ast.Node, Span]
N = TypeVar("N", bound=ast.Node)


class Inline:
    """A helper rule's children (`_member`, repetitions), spliced into the parent's."""

    __slots__ = ("data", "children")

    def __init__(self, data: str, children: list) -> None:
        self.data, self.children = data, children


class AstBuilder:
    """Builds nodes for one file. `file` is written into every span.

    The generated parser's inline `transformer`; rules without a method
    here go to `__default__`, as lark's own transformers do.
    """

    def __init__(self, file: str) -> None:
        self.file = file
        #: The text being parsed, when it is a whole file: long lists keep their literals as offsets into it.
        self.source: SourceFile | None = None
        #: The text being parsed (a whole file, or a chunk error recovery re-parses): what every span points into.
        self.origin = SourceFile(file, "")

    def __default__(self, data: str, children: list, meta: object = None) -> Inline:
        if self.source is not None:
            kind = _PACKED.get(data[: data.rfind("_")])
            if kind is not None:
                first = children[0]
                if first.__class__ is kind and len(children) == 2:
                    first.add(children.pop())  # the usual step of a long list or block: one more item
                else:
                    children = self._pack(children, self.source, kind)
        return Inline(data, children)

    def _pack(self, items: list, source: SourceFile, kind: type[ast.PackedItems | ast.PackedAttributes]) -> list:
        """A list's (or call's) items or a block's members after the first, as they accumulate: past
        PACK_AFTER of them, one `kind` that takes each new one as it is parsed, so a long list or block
        never holds its nodes at once."""
        first = items[0]
        if first.__class__ is kind:
            for item in items[1:]:
                first.add(item)
            del items[1:]
            return items
        if len(items) <= PACK_AFTER or source.path != self.file:
            return items
        packed = kind(source)
        for item in items:
            packed.add(item)
        return [packed]

    @staticmethod
    def _items(values: list) -> tuple | ast.PackedItems:
        """A list's or call's item nodes (None for a missing `[optional]` part dropped): a tuple, or PackedItems."""
        items = [v for v in values if v is not None]
        if items and items[-1].__class__ is ast.PackedItems:
            packed: ast.PackedItems = items.pop()
            for item in reversed(items):
                packed.prepend(item)
            return packed
        return tuple(items)

    # --- spans ------------------------------------------------------------------

    def _span(self, first: Spanned, last: Spanned | None = None) -> Span:
        # Called for almost every token, so by elimination: a node's span, a span, else a token (either
        # lexer's: two token classes share the attributes). Offsets only; lines are read when asked for.
        last = first if last is None else last
        if isinstance(first, ast.Node):
            first = first.span
        start = first.offset if first.__class__ is Span else first.start_pos  # type: ignore[union-attr]
        if isinstance(last, ast.Node):
            last = last.span
        end = last.end_offset if last.__class__ is Span else last.end_pos  # type: ignore[union-attr]
        return span_of(self.origin, start, end)

    def _ident(self, tok: Token) -> ast.Ident:
        return _Ident(span=self._span(tok), name=_name(tok))

    # --- file -------------------------------------------------------------------

    def start(self, children: list) -> tuple:
        return children[0], tuple(children[1:])

    def version(self, children: list) -> ast.Number:
        return self.number([children[1]])

    # --- declarations -------------------------------------------------------------

    def _described(self, construct: Callable[..., N], children: list) -> N:
        kw, name, description, body = children
        return construct(span=self._span(kw, body), name=self._ident(name), description=description, body=body)

    def tool_decl(self, c: list) -> ast.ToolDecl:
        return self._described(_ToolDecl, c)

    def agent_decl(self, c: list) -> ast.AgentDecl:
        return self._described(_AgentDecl, c)

    def step_decl(self, c: list) -> ast.StepDecl:
        return self._described(_StepDecl, c)

    def consolidate_decl(self, c: list) -> ast.ConsolidateDecl:
        return self._described(_ConsolidateDecl, c)

    def mcp_decl(self, c: list) -> ast.McpDecl:
        return self._described(_McpDecl, c)

    def thread_decl(self, c: list) -> ast.ThreadDecl:
        kw, name, description, body = c
        end = body or description or name
        return _ThreadDecl(span=self._span(kw, end), name=self._ident(name), description=description, body=body)

    def model_decl(self, c: list) -> ast.ModelDecl:
        kw, name, target, body = c
        return _ModelDecl(span=self._span(kw, body or target), name=self._ident(name), target=target, body=body)

    def parallel_decl(self, c: list) -> ast.ParallelDecl:
        kw, name, branches, body = c
        return _ParallelDecl(
            span=self._span(kw, body or branches), name=self._ident(name), branches=branches, body=body
        )

    def import_decl(self, c: list) -> ast.ImportDecl:
        return _ImportDecl(span=self._span(c[0], c[1]), path=c[1])

    def chain_decl(self, c: list) -> ast.ChainDecl:
        kw, name, *elements, body = c
        return _ChainDecl(
            span=self._span(kw, body or elements[-1]), name=self._ident(name), elements=tuple(elements), body=body
        )

    def chain_ref(self, c: list) -> ast.ChainRef:
        return _ChainRef(span=self._span(c[0]), name=_name(c[0]))

    def inline_parallel(self, c: list) -> ast.InlineParallel:
        # `parallel ( name ... )`: the names lie between the brackets.
        return _InlineParallel(span=self._span(c[0], c[-1]), branches=tuple(self._ident(t) for t in c[2:-1]))

    # --- plait 0.2 declarations -------------------------------------------------

    def _fields(self, c: list) -> ast.Params:
        """`KEYWORD { param ... }`: a typed block (params, output, answer) or input/state's fields."""
        return _Params(
            span=self._span(c[0], c[-1]), params=tuple(p for p in c[2:-1] if p is not None), keyword=c[0].value
        )

    def input_decl(self, c: list) -> ast.InputDecl:
        fields = self._fields(c)
        return _InputDecl(span=fields.span, fields=fields)

    def state_decl(self, c: list) -> ast.StateDecl:
        fields = self._fields(c)
        return _StateDecl(span=fields.span, fields=fields)

    def route_decl(self, c: list) -> ast.RouteDecl:
        kw, name, description, _on, subject, lbrace, *members, rbrace = c
        attributes = tuple(m for m in members if isinstance(m, ast.Attribute))
        return _RouteDecl(
            span=self._span(kw, rbrace),
            name=self._ident(name),
            description=description,
            subject=subject,
            cases=tuple(m for m in members if isinstance(m, ast.RouteCase)),
            body=_Block(span=self._span(lbrace, rbrace), attributes=attributes) if attributes else None,
        )

    def route_case(self, c: list) -> ast.RouteCase:
        label, target, loop = c
        # `else` arrives as its token; a literal as its node.
        literal = None if isinstance(label, str) else label
        return _RouteCase(
            span=self._span(label, loop if loop is not None else target),
            literal=literal,
            target=self._ident(target),
            loop=self._ident(loop) if loop is not None else None,
        )

    def else_label(self, c: list) -> str:
        return c[0]

    def _body_decl(self, construct: Callable[..., N], c: list) -> N:
        kw, name, description, *elements, block = c
        return construct(
            span=self._span(kw, block),
            name=self._ident(name),
            description=description,
            body=tuple(elements),
            block=block,
        )

    def loop_decl(self, c: list) -> ast.LoopDecl:
        return self._body_decl(_LoopDecl, c)

    def map_decl(self, c: list) -> ast.MapDecl:
        return self._body_decl(_MapDecl, c)

    def ask_decl(self, c: list) -> ast.AskDecl:
        kw, name, question, block = c
        return _AskDecl(span=self._span(kw, block or question), name=self._ident(name), question=question, block=block)

    def test_decl(self, c: list) -> ast.TestDecl:
        kw, name, description, _lbrace, *members, rbrace = c
        members = [m for m in members if m is not None]
        return _TestDecl(
            span=self._span(kw, rbrace),
            name=self._ident(name),
            description=description,
            attributes=tuple(m for m in members if isinstance(m, ast.Attribute)),
            expects=tuple(m for m in members if isinstance(m, ast.Expect)),
        )

    def expect(self, c: list) -> ast.Expect:
        return _Expect(span=self._span(c[0], c[1]), subject=c[1])

    def expect_word(self, c: list) -> ast.Expect:
        kw, subject, word, value = c
        return _Expect(span=self._span(kw, value), subject=subject, op=self._ident(word), value=value)

    def path(self, c: list) -> ast.PathValue:
        # The head is a token; later parts went through `name` (keywords allowed there).
        return _PathValue(span=self._span(c[0], c[-1]), parts=(_name(c[0]), *(part.name for part in c[1:])))

    path_value = path

    def path_succeeded(self, c: list) -> ast.Succeeded:
        target = self.path(c[:-1])
        return _Succeeded(span=self._span(c[0], c[-1]), target=target)

    # --- conditions ---------------------------------------------------------------

    def _boolop(self, op: str, c: list) -> ast.BoolOp:
        operands = tuple(c[::2])  # operand, keyword, operand, ...
        return _BoolOp(span=self._span(c[0], c[-1]), op=op, operands=operands)

    def or_test(self, c: list) -> ast.BoolOp:
        return self._boolop("or", c)

    def and_test(self, c: list) -> ast.BoolOp:
        return self._boolop("and", c)

    def not_test(self, c: list) -> ast.Not:
        return _Not(span=self._span(c[0], c[1]), operand=c[1])

    def compare(self, c: list) -> ast.Compare:
        left, op, right = c
        return _Compare(span=self._span(left, right), left=left, op=str(op), right=right)

    def group(self, c: list) -> ast.Node:
        # `( expr )`: the expression itself, its span widened to the brackets.
        return replace(c[1], span=self._span(c[0], c[2]))

    # --- blocks -------------------------------------------------------------------

    def block(self, c: list) -> ast.Block:
        members = [m for m in c[1:-1] if m is not None]
        if members and members[-1].__class__ is ast.PackedAttributes:
            packed: ast.PackedAttributes = members.pop()
            for member in reversed(members):
                packed.prepend(member)
            return _Block(span=self._span(c[0], c[-1]), attributes=packed, params=tuple(packed.params))
        return _Block(
            span=self._span(c[0], c[-1]),
            attributes=tuple(m for m in members if isinstance(m, ast.Attribute)),
            params=tuple(m for m in members if isinstance(m, ast.Params)),
        )

    def attribute(self, c: list) -> ast.Attribute:
        key, value = c
        if isinstance(key, ast.String):
            ident, quoted = _Ident(span=key.span, name=key.value), True
        else:
            ident, quoted = key, False
        return _Attribute(span=self._span(ident, value), key=ident, quoted=quoted, value=value)

    def name(self, c: list) -> ast.Ident:
        return self._ident(c[0])

    def bindings(self, c: list) -> ast.Attribute:
        """`with { plan: planner.tasks }`: the attribute `with` whose value is a block of `name = value` entries
        (`with = { plan = planner.tasks }` says the same; the formatter writes this form)."""
        kw, lbrace, *entries, rbrace = c
        block = _Block(span=self._span(lbrace, rbrace), attributes=tuple(e for e in entries if e is not None))
        return _Attribute(span=self._span(kw, rbrace), key=self._ident(kw), quoted=False, value=block)

    def binding(self, c: list) -> ast.Attribute:
        key, value = c
        return _Attribute(span=self._span(key, value), key=key, quoted=False, value=value)

    def params(self, c: list) -> ast.Params:
        return self._fields(c)

    def param(self, c: list) -> ast.Param:
        name, type_, description, default = c
        return _Param(
            span=self._span(name, default or description or type_),
            name=name,
            type=type_,
            description=description,
            default=default,
        )

    # --- types --------------------------------------------------------------------

    def type(self, c: list) -> ast.TypeExpr:
        atom = c[0]
        if len(c) == 1:
            return atom
        return replace(atom, optional=True, span=self._span(atom, c[1]))

    def type_name(self, c: list) -> ast.TypeExpr:
        return _TypeExpr(span=self._span(c[0]), form="name", name=_name(c[0]), optional=False)

    def type_generic(self, c: list) -> ast.TypeExpr:
        return _TypeExpr(span=self._span(c[0], c[-1]), form="generic", name=str(c[0]), args=(c[2],), optional=False)

    def type_object(self, c: list) -> ast.TypeExpr:
        return _TypeExpr(
            span=self._span(c[0], c[-1]),
            form="object",
            name=str(c[0]),
            fields=tuple(p for p in c[2:-1] if p is not None),
            optional=False,
        )

    def type_union(self, c: list) -> ast.TypeExpr:
        return _TypeExpr(span=self._span(c[0], c[-1]), form="union", literals=tuple(c), optional=False)

    def type_names(self, c: list) -> ast.TypeExpr:
        """`Flight | Hotel` (plait 0.3): a union of named types, each kept as a "name" type."""
        args = tuple(self.type_name([tok]) for tok in c)
        return _TypeExpr(span=self._span(c[0], c[-1]), form="names", args=args, optional=False)

    def output_type(self, c: list) -> ast.Params:
        """`output TYPE` (plait 0.3): an output that is one type (a list, a named record or union), not fields."""
        kw, type_ = c
        return _Params(span=self._span(kw, type_), params=(), keyword=kw.value, type=type_)

    def type_decl(self, c: list) -> ast.TypeDecl:
        """`type NAME ["description"] { field: type ... }`: a named record."""
        kw, name, description, lbrace, *fields, rbrace = c
        params = _Params(
            span=self._span(lbrace, rbrace), params=tuple(p for p in fields if p is not None), keyword="params"
        )
        return _TypeDecl(span=self._span(kw, rbrace), name=self._ident(name), description=description, fields=params)

    def type_alias(self, c: list) -> ast.TypeDecl:
        """`type NAME = TYPE`: a name for any type (a union of records, a literal union)."""
        kw, name, type_ = c
        return _TypeDecl(span=self._span(kw, type_), name=self._ident(name), alias=type_)

    # --- values -------------------------------------------------------------------

    def string(self, c: list) -> ast.String:
        tok = c[0]
        span = self._span(tok)
        if tok.type == "LONG_STRING":
            return _String(span=span, value=decode_block_string(str(tok)), block=True)
        try:
            value = decode_string(str(tok))
        except ValueError:
            raise StringError("invalid escape in string", span) from None
        return _String(span=span, value=value, block=False)

    def number(self, c: list) -> ast.Number:
        # The token's own text (a plain str), not str(token): a copy per number was a fifth of a long list's memory.
        raw = getattr(c[0], "value", None) or str(c[0])
        try:
            value = ast.number_value(raw)
        except ValueError:
            raise NumberError(self._span(c[0])) from None
        return _Number(span=self._span(c[0]), value=value, raw=raw)

    def duration(self, c: list) -> ast.Duration:
        raw = str(c[0])
        unit = "ms" if raw.endswith("ms") else raw[-1]
        seconds = float(raw[: -len(unit)]) * _DURATION_UNITS[unit]
        return _Duration(span=self._span(c[0]), seconds=seconds, raw=raw)

    def size(self, c: list) -> ast.Size:
        raw = str(c[0])
        unit = raw.lstrip("0123456789.")
        amount = raw[: -len(unit)]
        try:
            count = int(float(amount) * _SIZE_UNITS[unit]) if "." in amount else int(amount) * _SIZE_UNITS[unit]
        except (ValueError, OverflowError):
            raise NumberError(self._span(c[0])) from None
        return _Size(span=self._span(c[0]), bytes=count, raw=raw)

    def true(self, c: list) -> ast.Bool:
        return _Bool(span=self._span(c[0]), value=True)

    def false(self, c: list) -> ast.Bool:
        return _Bool(span=self._span(c[0]), value=False)

    def ref(self, c: list) -> ast.Ref:
        return _Ref(span=self._span(c[0]), name=_name(c[0]))

    def succeeded(self, c: list) -> ast.Succeeded:
        target = self.ref([c[0]])
        return _Succeeded(span=self._span(c[0], c[1]), target=target)

    def call(self, c: list) -> ast.Call:
        func, *args, rpar, block = c
        return _Call(
            span=self._span(func, block or rpar),
            func=self._ident(func),
            args=self._items(args[1:]),
            block=block,
        )

    def list(self, c: list) -> ast.ListValue:
        return _ListValue(span=self._span(c[0], c[-1]), items=self._items(c[1:-1]))
