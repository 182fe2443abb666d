"""A `{{ expression }}`'s text and the types of the paths it reads → its type, and the findings (P403, P404) at
their positions inside the expression.

The tree is Jinja2's (`plait.core.expr.parse`), walked through the public
`jinja2.nodes` classes. Each dotted path (`loop.last.feedback`,
`review["verdict"]`) is handed to the caller's `resolve`, which types it
exactly as a plain `{{path}}` is typed (fields, dominance, `loop...` outside a
body) and reports its own findings; this module types what is built on top:
operators, comparisons, `in`, filters, tests, `len()`, `now()`, the methods of
text. A type it cannot know (an undeclared input) is `any`, and `any` passes.
Positions: Jinja records a node's line only, so a finding is placed by finding
its text (the path, `|filter`, `name(`) in the expression, left to right.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable

from plait.core import types as t

from .rules import unresolved_template as _codes  # noqa: F401  (P403/P404 are declared there; make() needs them)

if TYPE_CHECKING:
    from jinja2 import nodes

    from plait.core.conditions import Expr

__all__ = ["Finding", "check", "paths", "reads", "sole", "sole_read"]


@dataclass
class Finding:
    """A problem in an expression: what, where (offsets into its text), and what to do."""

    code: str
    message: str
    start: int
    end: int
    notes: list[str] = field(default_factory=list)
    fix: str | None = None


#: (parts, start, end) → the path's type, or None when it does not resolve (the caller has reported why).
Resolve = Callable[[tuple[str, ...], int, int], "t.Type | None"]

_TEXT_FILTERS = {
    "upper", "lower", "title", "capitalize", "trim", "striptags", "replace", "truncate", "center", "indent",
    "wordwrap", "urlencode", "format", "string", "tojson", "join", "escape", "e", "forceescape", "safe",
    "filesizeformat", "pprint", "xmlattr", "urlize",
}  # fmt: skip
_SAME_FILTERS = {"sort", "unique", "reverse", "list", "batch", "slice"}
_ITEM_FILTERS = {"first", "last", "random", "min", "max"}
_NUMBER_FILTERS = {"abs": None, "round": t.FLOAT, "int": t.INT, "float": t.FLOAT, "sum": None}
_COUNT_FILTERS = {"length", "count", "wordcount"}
_LIST_FILTERS = {"map", "select", "reject", "selectattr", "rejectattr", "dictsort", "items", "groupby"}
_DEFAULT_FILTERS = {"default", "d"}
_TESTS = {
    "defined", "undefined", "none", "number", "string", "mapping", "sequence", "iterable", "boolean", "integer",
    "float", "true", "false", "odd", "even", "divisibleby", "eq", "ne", "lt", "le", "gt", "ge", "in", "lower",
    "upper", "sameas", "equalto", "greaterthan", "lessthan", "escaped", "callable", "filter", "test",
}  # fmt: skip
#: Methods of text an expression may call, and what each gives.
_TEXT_METHODS: dict[str, t.Type] = {
    **{m: t.TEXT for m in ("upper", "lower", "strip", "lstrip", "rstrip", "title", "capitalize", "replace")},
    **{m: t.BOOL for m in ("startswith", "endswith", "isdigit", "isalpha", "isspace")},
    "split": t.ListType(t.TEXT),
    "splitlines": t.ListType(t.TEXT),
    "count": t.INT,
    "find": t.INT,
}
_FUNCTIONS: dict[str, t.Type] = {"len": t.INT, "now": t.TEXT, "today": t.TEXT, "json": t.TEXT}
_ARITHMETIC = {"Sub": "-", "Mul": "*", "Div": "/", "FloorDiv": "//", "Mod": "%", "Pow": "**"}
_ORDER = {"lt": "<", "lteq": "<=", "gt": ">", "gteq": ">="}


def paths(tree: nodes.Expr) -> list[tuple[str, ...]]:
    """Every dotted path the expression reads, outermost first, in the order written."""
    from jinja2 import nodes as n

    found: list[tuple[str, ...]] = []

    def visit(node: n.Node) -> None:
        parts = _path(node)
        if parts is not None:
            found.append(parts)
            return
        if isinstance(node, n.Call):  # a function's or a method's name is not a read
            if isinstance(node.node, n.Getattr):
                visit(node.node.node)  # a text method: its receiver is the read
            for child in (*node.args, *(k.value for k in node.kwargs)):
                visit(child)
            return
        for sub in node.iter_child_nodes():
            visit(sub)

    visit(tree)
    return found


_SOLE = re.compile(r"\s*\{\{(.*?)\}\}\s*", re.S)


def sole(text: str) -> str | None:
    """The expression a string is made of (`"{{ 'APPROVED' in reply }}"` → `'APPROVED' in reply`), or None."""
    found = _SOLE.fullmatch(text)
    return found.group(1).strip() or None if found is not None else None


def sole_read(text: str) -> tuple[str, ...] | Expr | None:
    """What a string made of one `{{ ... }}` reads: a path in braces (`"{{plan.tasks}}"`) as the path's parts, an
    expression as its `Expr`; None for any other string."""
    from plait.core.conditions import Expr

    from .rules._placeholders import is_path

    found = sole(text)
    if found is None:
        return None
    return tuple(found.split(".")) if is_path(found) else Expr(found)


def reads(text: str) -> list[tuple[str, ...]]:
    """The paths the expression `text` reads; none when it does not parse (the template rule says why)."""
    from plait.core.expr import ExprSyntaxError, parse

    try:
        return paths(parse(text))
    except ExprSyntaxError:
        return []


def _path(node: Any) -> tuple[str, ...] | None:
    from jinja2 import nodes as n

    if isinstance(node, n.Name):
        return (node.name,)
    if isinstance(node, n.Getattr):
        head = _path(node.node)
        return None if head is None else (*head, node.attr)
    if isinstance(node, n.Getitem) and isinstance(node.arg, n.Const) and isinstance(node.arg.value, str):
        head = _path(node.node)
        return None if head is None else (*head, node.arg.value)
    return None


def _texty(typed: t.Type) -> bool:
    typed = t.strip_optional(typed)
    if isinstance(typed, t.LiteralType):
        return all(isinstance(v, str) for v in typed.values)
    if isinstance(typed, t.UnionType):
        return all(_texty(o) for o in typed.options)
    return isinstance(typed, t.TextType | t.AnyType)


def _numeric(typed: t.Type) -> bool:
    typed = t.strip_optional(typed)
    if isinstance(typed, t.UnionType):
        return all(_numeric(o) for o in typed.options)
    return t.is_numeric(typed)


def _sized(typed: t.Type) -> bool:
    typed = t.strip_optional(typed)
    if isinstance(typed, t.UnionType):
        return all(_sized(o) for o in typed.options)
    return _texty(typed) or isinstance(typed, t.ListType | t.ObjectType | t.AnyType)


def _absent(typed: t.Type) -> bool:
    return isinstance(typed, t.OptionalType)


def _shown(typed: t.Type) -> str:
    # A literal written in the expression (`" pages"`) is shown by its kind: the finding is about types.
    if isinstance(typed, t.LiteralType) and len(typed.values) == 1 and isinstance(typed.values[0], str):
        return "string"
    return t.describe(typed)


class _Walk:
    def __init__(self, text: str, resolve: Resolve) -> None:
        self.text = text
        self.resolve = resolve
        self.findings: list[Finding] = []
        #: Where the search for the next occurrence of a piece of text starts: left to right, as written.
        self.cursor: dict[str, int] = {}

    def where(self, pattern: str) -> tuple[int, int]:
        """The next place `pattern` (a regex) matches in the expression; the whole expression when it does not."""
        start = self.cursor.get(pattern, 0)
        found = _compiled(pattern).search(self.text, start)
        if found is None:
            return 0, len(self.text)
        self.cursor[pattern] = found.end()
        return found.start(), found.end()

    def report(self, span: tuple[int, int], message: str, notes: list[str] | None = None, fix: str | None = None):
        self.findings.append(Finding("P404", message, span[0], span[1], notes or [], fix))

    def path_span(self, parts: tuple[str, ...]) -> tuple[int, int]:
        pattern = r"(?<![\w.])" + r"\s*(?:\.\s*|\[\s*['\"])".join(re.escape(p) for p in parts) + r"(?!\w)"
        return self.where(pattern)

    def whole(self) -> tuple[int, int]:
        return 0, len(self.text)

    # --- the walk ---------------------------------------------------------------------

    def type(self, node: Any) -> t.Type:
        from jinja2 import nodes as n

        parts = _path(node)
        if parts is not None:
            start, end = self.path_span(parts)
            found = self.resolve(parts, start, end)
            return t.ANY if found is None else found
        if isinstance(node, n.Const):
            value = node.value
            if isinstance(value, bool):
                return t.BOOL
            if isinstance(value, int):
                return t.INT
            if isinstance(value, float):
                return t.FLOAT
            if isinstance(value, str):
                return t.LiteralType((value,))  # so `"a" if c else "b"` is `"a" | "b"`, a route can cover it
            return t.ANY
        if isinstance(node, n.List | n.Tuple):
            items = [self.type(item) for item in node.items]
            return t.ListType(t.union_of(items) if items else t.ANY)
        if isinstance(node, n.Dict):
            for pair in node.items:
                self.type(pair.value)
            return t.ANY
        if isinstance(node, n.Getattr):
            return self.field(self.type(node.node), node.attr)
        if isinstance(node, n.Getitem):
            return self.item(node)
        if isinstance(node, n.Call):
            return self.call(node)
        if isinstance(node, n.Filter):
            return self.filter(node)
        if isinstance(node, n.Test):
            return self.test(node)
        if isinstance(node, n.Compare):
            return self.compare(node)
        if isinstance(node, n.Not):
            self.type(node.node)
            return t.BOOL
        if isinstance(node, n.And):
            left, right = self.type(node.left), self.type(node.right)
            return t.BOOL if left == right == t.BOOL else t.union_of([left, right])
        if isinstance(node, n.Or):
            left, right = self.type(node.left), self.type(node.right)
            return t.union_of([t.strip_optional(left), right])
        if isinstance(node, n.CondExpr):
            self.type(node.test)
            then = self.type(node.expr1)
            otherwise = self.type(node.expr2) if node.expr2 is not None else t.LiteralType(("",))
            if isinstance(then, t.LiteralType) and isinstance(otherwise, t.LiteralType):
                return t.LiteralType(tuple(dict.fromkeys((*then.values, *otherwise.values))))
            return t.union_of([then, otherwise])
        if isinstance(node, n.Concat):
            for item in node.nodes:
                self.type(item)
            return t.TEXT
        if isinstance(node, n.Neg | n.Pos):
            inner = self.type(node.node)
            self.number(inner, "-" if isinstance(node, n.Neg) else "+")
            return inner if _numeric(inner) else t.ANY
        if isinstance(node, n.Add):
            return self.add(self.type(node.left), self.type(node.right))
        if isinstance(node, n.BinExpr):
            return self.arithmetic(node)
        if isinstance(node, n.Slice):
            for part in (node.start, node.stop, node.step):
                if part is not None:
                    self.type(part)
            return t.ANY
        return t.ANY

    def field(self, base: t.Type, name: str) -> t.Type:
        found = t.step(t.strip_optional(base), name)
        if found is None:
            self.report(
                self.where(r"\.\s*" + re.escape(name) + r"(?!\w)"),
                f"`{_shown(base)}` has no field `{name}`",
                notes=[f"its fields are {', '.join(t.field_names(base)) or 'none'}"] if t.field_names(base) else [],
            )
            return t.ANY
        return found

    def item(self, node: Any) -> t.Type:
        from jinja2 import nodes as n

        base = self.type(node.node)
        if isinstance(node.arg, n.Slice):
            self.type(node.arg)
            return base
        key = self.type(node.arg)
        current = t.strip_optional(base)
        if isinstance(current, t.ListType):
            if not _numeric(key):
                self.report(self.whole(), f"a list is indexed by a number, not `{_shown(key)}`")
            return current.item
        if _texty(current) and not isinstance(current, t.AnyType):
            return t.TEXT
        return t.ANY

    def call(self, node: Any) -> t.Type:
        from jinja2 import nodes as n

        args = [self.type(a) for a in node.args]
        for kw in node.kwargs:
            self.type(kw.value)
        if isinstance(node.node, n.Name):
            name = node.node.name
            if name not in _FUNCTIONS:
                self.report(
                    self.where(r"(?<![\w.])" + re.escape(name) + r"\s*\("),
                    f"`{name}()` is not a function of plait's expressions",
                    notes=["the functions are " + ", ".join(f"`{f}()`" for f in _FUNCTIONS) + "; filters follow `|`"],
                )
                return t.ANY
            wanted = 1 if name in ("len", "json") else 0
            if len(args) != wanted:
                self.report(self.where(re.escape(name) + r"\s*\("), f"`{name}()` takes {wanted} argument(s)")
            elif name == "len" and not _sized(args[0]):
                self.report(
                    self.where(re.escape(name) + r"\s*\("),
                    f"`len()` counts text, a list or a record, not `{_shown(args[0])}`",
                )
            return _FUNCTIONS[name]
        if isinstance(node.node, n.Getattr):
            receiver = self.type(node.node.node)
            method = node.node.attr
            span = self.where(r"\.\s*" + re.escape(method) + r"\s*\(")
            if isinstance(t.strip_optional(receiver), t.AnyType):
                return t.ANY
            if _texty(receiver) and method in _TEXT_METHODS:
                if _absent(receiver):
                    self.absent(span, receiver, f".{method}()")
                return _TEXT_METHODS[method]
            self.report(
                span,
                f"`.{method}()` is not a method of `{_shown(receiver)}`",
                notes=["text has " + ", ".join(f"`.{m}()`" for m in _TEXT_METHODS) + "; other values take filters"],
            )
            return t.ANY
        self.type(node.node)
        self.report(self.whole(), "only a function or a method of text can be called")
        return t.ANY

    def filter(self, node: Any) -> t.Type:
        base = self.type(node.node) if node.node is not None else t.ANY
        args = [self.type(a) for a in node.args]
        for kw in node.kwargs:
            self.type(kw.value)
        name = node.name
        span = self.where(r"\|\s*" + re.escape(name) + r"(?!\w)")
        current = t.strip_optional(base)
        if name in _DEFAULT_FILTERS:
            fallback = args[0] if args else t.TEXT
            return t.union_of([current, fallback])
        if name in _COUNT_FILTERS:
            if not _sized(base):
                self.report(span, f"`|{name}` counts text, a list or a record, not `{_shown(base)}`")
            return t.INT
        if name in _TEXT_FILTERS:
            if name == "join" and not isinstance(current, t.ListType | t.AnyType):
                self.report(span, f"`|join` joins a list, not `{_shown(base)}`")
            return t.TEXT
        if name in _SAME_FILTERS:
            return base if isinstance(current, t.ListType) else t.ListType(t.ANY)
        if name in _ITEM_FILTERS:
            if isinstance(current, t.ListType):
                return current.item
            if not isinstance(current, t.AnyType) and not _texty(current):
                self.report(span, f"`|{name}` takes an item of a list, not of `{_shown(base)}`")
            return t.ANY
        if name in _NUMBER_FILTERS:
            typed = _NUMBER_FILTERS[name]
            if name in ("abs", "round") and not _numeric(base):
                self.report(span, f"`|{name}` takes a number, not `{_shown(base)}`")
            return typed or (current if _numeric(current) else t.ANY)
        if name in _LIST_FILTERS:
            return t.ListType(t.ANY)
        from plait.core.expr import environment

        known = sorted(environment().filters)
        from .schema import suggest

        hint = suggest(name, known)
        self.report(
            span,
            f"`|{name}` is not a filter",
            notes=["filters include `default`, `length`, `join`, `tojson`, `upper`, `lower`, `first`, `last`, `round`"],
            fix=f"did you mean `|{hint}`?" if hint else None,
        )
        return t.ANY

    def test(self, node: Any) -> t.Type:
        self.type(node.node)
        for a in node.args:
            self.type(a)
        if node.name not in _TESTS:
            self.report(
                self.where(r"\bis\s+(?:not\s+)?" + re.escape(node.name) + r"(?!\w)"),
                f"`is {node.name}` is not a test",
                notes=["tests include `is defined`, `is none`, `is number`, `is string`, `is even`"],
            )
        return t.BOOL

    def compare(self, node: Any) -> t.Type:
        left = self.type(node.expr)
        for operand in node.ops:
            right = self.type(operand.expr)
            if operand.op in _ORDER:
                symbol = _ORDER[operand.op]
                span = self.where(re.escape(symbol) + r"(?!=)" if symbol in "<>" else re.escape(symbol))
                both_text = _texty(left) and _texty(right)
                if not both_text and not (_numeric(left) and _numeric(right)):
                    self.report(
                        span, f"`{symbol}` compares two numbers (or two texts): `{_shown(left)}` and `{_shown(right)}`"
                    )
                elif _absent(left) or _absent(right):
                    self.absent(span, left if _absent(left) else right, symbol)
            elif operand.op in ("in", "notin"):
                span = self.where(r"\b(?:not\s+)?in\b")
                container = t.strip_optional(right)
                if _absent(right):
                    self.absent(span, right, "in")
                elif isinstance(container, t.ListType | t.AnyType):
                    pass
                elif _texty(container):
                    if not _texty(left):
                        self.report(span, f"`in` text looks for text, not `{_shown(left)}`")
                elif isinstance(container, t.ObjectType):
                    if not _texty(left):
                        self.report(span, f"`in` a record looks for a field name (text), not `{_shown(left)}`")
                else:
                    self.report(
                        span,
                        f"`in` looks inside text, a list or a record, not `{_shown(right)}`",
                    )
            left = right
        return t.BOOL

    def add(self, left: t.Type, right: t.Type) -> t.Type:
        span = self.where(r"(?<![+])\+(?![+])")
        if _numeric(left) and _numeric(right):
            if _absent(left) or _absent(right):
                self.absent(span, left if _absent(left) else right, "+")
            plain = (t.strip_optional(left), t.strip_optional(right))
            if any(isinstance(p, t.AnyType) for p in plain):
                return t.ANY
            return t.INT if all(isinstance(p, t.IntType) for p in plain) else t.FLOAT
        if _texty(left) and _texty(right):
            if _absent(left) or _absent(right):
                self.absent(span, left if _absent(left) else right, "+")
            return t.TEXT
        lists = [t.strip_optional(x) for x in (left, right)]
        if all(isinstance(x, t.ListType | t.AnyType) for x in lists):
            return t.ANY if any(isinstance(x, t.AnyType) for x in lists) else lists[0]
        self.report(
            span,
            f"`+` adds two numbers, two texts or two lists, not `{_shown(left)}` and `{_shown(right)}`",
            notes=["`~` joins any two values as text"],
        )
        return t.ANY

    def arithmetic(self, node: Any) -> t.Type:
        symbol = _ARITHMETIC.get(type(node).__name__, "?")
        left, right = self.type(node.left), self.type(node.right)
        span = self.where(re.escape(symbol))
        if symbol == "*" and ((_texty(left) and _numeric(right)) or (_numeric(left) and _texty(right))):
            if not (isinstance(t.strip_optional(left), t.AnyType) or isinstance(t.strip_optional(right), t.AnyType)):
                return t.TEXT
        if not (_numeric(left) and _numeric(right)):
            self.report(span, f"`{symbol}` takes two numbers, not `{_shown(left)}` and `{_shown(right)}`")
            return t.ANY
        if _absent(left) or _absent(right):
            self.absent(span, left if _absent(left) else right, symbol)
        plain = (t.strip_optional(left), t.strip_optional(right))
        if any(isinstance(p, t.AnyType) for p in plain):
            return t.ANY
        if symbol == "/":
            return t.FLOAT
        return t.INT if all(isinstance(p, t.IntType) for p in plain) else t.FLOAT

    def number(self, typed: t.Type, symbol: str) -> None:
        if not _numeric(typed):
            self.report(self.where(re.escape(symbol)), f"`{symbol}` takes a number, not `{_shown(typed)}`")

    def absent(self, span: tuple[int, int], typed: t.Type, what: str) -> None:
        self.report(
            span,
            f"`{what}` reads a value that may be absent (`{_shown(typed)}`)",
            notes=["an optional field left out, or `loop.last` on the first iteration, is null"],
            fix='give it a default: `| default(...)`, e.g. `(x | default(0))`, `(x | default(""))`',
        )


@lru_cache(maxsize=8192)
def _compiled(pattern: str) -> re.Pattern[str]:
    # A pattern names a path's parts, so a spec has thousands of them: past `re`'s own cache of 512, every
    # expression compiled its patterns afresh, per use.
    return re.compile(pattern)


def check(text: str, resolve: Resolve) -> tuple[t.Type | None, list[Finding]]:
    """The expression's type and its findings; (None, [a P403]) when it does not parse."""
    from plait.core.expr import ExprSyntaxError, parse

    try:
        tree = parse(text)
    except ExprSyntaxError as e:
        return None, [Finding("P403", f"`{{{{ {_clip(text)} }}}}` is not an expression: {e.message}", 0, len(text))]
    walk = _Walk(text, resolve)
    typed = walk.type(tree)
    return typed, walk.findings


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 40 else text[:36] + "…"
