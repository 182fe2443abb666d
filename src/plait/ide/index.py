"""One parsed module → every place a declaration's name is written: where it is declared, and each use.

Uses are attribute references (`model = fast`, `tools = [lookup]`), chain, loop,
map and parallel elements, route cases, the first part of a dotted path
(`review.verdict`, `files.read_text_file`, `over = plan.items`) and of a
template read (`{{review.verdict}}` in a prompt, system, task or question).
Whether a use really names a declaration is decided by the caller (the name
must be declared where the file can see it): a path starting with `input` is
not a use of anything. Not uses: attribute keys, bare-word values of
symbol-typed attributes (`approval = required`), arguments of `python(...)`,
`http(...)` and `env(...)`, tool `run` templates (they read parameters), an
mcp server's own `tools`/`approval` lists (they name the server's tools).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator, Literal

from plait.core.source import SourceFile, Span
from plait.dsl import ast

from plait.compiler.schema import SCHEMAS

if TYPE_CHECKING:
    from plait.compiler.rules._placeholders import Placeholder

__all__ = ["Occurrence", "declarations", "occurrences"]

#: Attribute value types whose words are never declaration names.
_NOT_NAMES = frozenset(
    {"symbol", "symbols", "run", "env", "keep_last", "string", "number", "int", "duration", "bool", "map", "size"}
    # A tool's `approval`: `required`/`never`, or a condition whose names are the tool's own arguments.
    | {"approval", "validator", "messages"}
    # An mcp server's own lists name the tools it offers, not declarations.
    | {"strings", "names", "env_map", "mcp_approval"}
)


@dataclass(frozen=True, slots=True)
class Occurrence:
    name: str
    #: The name itself (for a path or template read, only its first part).
    span: Span
    role: Literal["declaration", "use"]
    #: The declaration's kind, for a declaration.
    kind: str | None = None


def declarations(module: ast.Module) -> Iterator[ast.Decl]:
    """The module's declarations with a name of their own (not `input`, `state` or `import`, nor a `test`, whose
    name lives in a namespace of its own: a test may share a step's name)."""
    return (
        d
        for d in module.declarations
        if isinstance(getattr(d, "name", None), ast.Ident) and not isinstance(d, ast.TestDecl)
    )


def occurrences(module: ast.Module, source: SourceFile) -> tuple[Occurrence, ...]:
    """Every declaration name and use in the module, in text order."""
    found: list[Occurrence] = []
    for decl in module.declarations:
        if isinstance(decl, ast.TestDecl):
            found.extend(_test_uses(decl, source))
            continue
        name = getattr(decl, "name", None)
        if isinstance(name, ast.Ident):
            found.append(Occurrence(name.name, name.span, "declaration", decl.kind))
        found.extend(_uses(decl, source))
        found.extend(_type_uses(decl, source))
    return tuple(sorted(found, key=lambda o: o.span.offset))


def _uses(decl: ast.Node, source: SourceFile) -> Iterator[Occurrence]:
    from plait.compiler.passes.check_flow import template_strings

    kind = getattr(decl, "kind", "")
    if isinstance(decl, ast.ChainDecl):
        yield from _elements(decl.elements)
    elif isinstance(decl, ast.ParallelDecl):
        yield from _value(decl.branches, source)
    elif isinstance(decl, ast.RouteDecl):
        if isinstance(decl.subject, ast.String):  # `on "{{ len(review.notes) > 0 }}"`
            yield from _reads(decl.subject, source)
        else:
            yield from _path(decl.subject, source)
        for case in decl.cases:
            yield _use(case.target.name, case.target.span)
            if case.loop is not None:  # `-> break outer` names the loop it leaves
                yield _use(case.loop.name, case.loop.span)
    elif isinstance(decl, ast.LoopDecl | ast.MapDecl):
        yield from _elements(decl.body)
    block = getattr(decl, "block", None) if kind in ("loop", "map", "ask") else getattr(decl, "body", None)
    if isinstance(block, ast.Block) and kind not in ("model", "input", "state"):
        schema = SCHEMAS.get(kind, {})
        for attr in block.attributes:
            spec = schema.get(attr.key.name)
            if spec is not None and spec.type == "bindings" and isinstance(attr.value, ast.Block):
                for binding in attr.value.attributes:  # `with { plan: planner.tasks }` reads `planner`
                    if isinstance(binding.value, ast.String):  # `n: "{{ len(planner.tasks) }}"`
                        yield from _reads(binding.value, source)
                    else:
                        yield from _value(binding.value, source)
            elif spec is not None and spec.type == "run" and isinstance(attr.value, ast.Call):
                if attr.value.func.name == "delegate" and attr.value.args:  # `run = delegate(flight_finder)`
                    yield from _value(attr.value.args[0], source)
            elif spec is None or (spec.type not in _NOT_NAMES and spec.type != "template"):
                yield from _value(attr.value, source)
    if kind in ("step", "agent", "consolidate", "ask"):
        for string in template_strings(decl):
            yield from _reads(string, source)


#: Type names every spec has: never a use of a declaration.
_BUILTIN_TYPES = frozenset({"string", "int", "float", "bool", "date", "datetime", "list", "object"})


def _type_uses(decl: ast.Node, source: SourceFile) -> Iterator[Occurrence]:
    """The named types (plait 0.3, `type Flight { ... }`) a declaration's typed blocks and types name."""
    body = getattr(decl, "body", None) if not isinstance(decl, ast.AskDecl) else decl.block
    blocks = list(body.params) if isinstance(body, ast.Block) else []
    fields = getattr(decl, "fields", None)
    if isinstance(fields, ast.Params):  # input, state and a `type` record
        blocks.append(fields)
    stack: list[ast.TypeExpr] = [p.type for block in blocks for p in block.params]
    stack += [block.type for block in blocks if block.type is not None]
    if isinstance(decl, ast.TypeDecl) and decl.alias is not None:
        stack.append(decl.alias)
    while stack:
        expr = stack.pop()
        if expr.form == "name" and expr.name is not None and expr.name not in _BUILTIN_TYPES:
            # The name alone: `Flight?` ends past it.
            yield _use(expr.name, source.span(expr.span.offset, expr.span.offset + len(expr.name)))
        stack.extend(expr.args)
        stack.extend(p.type for p in expr.fields)


def _test_uses(decl: ast.TestDecl, source: SourceFile) -> Iterator[Occurrence]:
    """What a test names: its entry, the runnables, asks and tools its replies, answers, decisions and stand-in
    tool results are keyed by, and in each expectation the runnables, routes, loops, maps, asks, tools and models
    it reads or calls."""
    for attr in decl.attributes:
        if attr.key.name == "entry":
            yield from _value(attr.value, source)
        elif attr.key.name in ("replies", "answers", "decisions", "tools") and isinstance(attr.value, ast.Block):
            for entry in attr.value.attributes:
                if not entry.quoted:
                    yield _use(entry.key.name, entry.key.span)
    for expect in decl.expects:
        yield from _expected(expect.subject, source)
        if isinstance(expect.value, ast.ListValue):  # `in_order [lookup, submit({ ... })]`: tool calls
            yield from _expected(expect.value, source)


def _expected(value: object, source: SourceFile) -> Iterator[Occurrence]:
    if isinstance(value, ast.Ref | ast.PathValue):
        yield from _value(value, source)  # `output` and `run.` name no declaration: the caller drops them
    elif isinstance(value, ast.Call):
        # `case(triage)`, `called(lookup, { ... })`, `judge(grader, "...") { of = classify }`; in a list of
        # expected calls, `lookup({ ... })` names the tool itself.
        for arg in value.args:
            if isinstance(arg, ast.Ref):
                yield _use(arg.name, arg.span)
        for entry in value.block.attributes if value.block else ():
            if entry.key.name == "of":
                yield from _value(entry.value, source)
    elif isinstance(value, ast.ListValue):
        for item in value.items:
            if isinstance(item, ast.Call):
                yield _use(item.func.name, item.func.span)
            else:
                yield from _value(item, source)
    elif isinstance(value, ast.Compare):
        yield from _expected(value.left, source)
    elif isinstance(value, ast.Not):
        yield from _expected(value.operand, source)
    elif isinstance(value, ast.BoolOp):
        for operand in value.operands:
            yield from _expected(operand, source)


def _use(name: str, span: Span) -> Occurrence:
    return Occurrence(name, span, "use")


def _elements(elements: tuple[ast.ChainElement, ...]) -> Iterator[Occurrence]:
    for element in elements:
        if isinstance(element, ast.ChainRef):
            yield _use(element.name, element.span)
        else:
            for branch in element.branches:
                yield _use(branch.name, branch.span)


def _value(value: object, source: SourceFile) -> Iterator[Occurrence]:
    """Names in an attribute value: references, path heads, `X succeeded`, condition operands, list items."""
    if isinstance(value, ast.Ref):
        yield _use(value.name, value.span)
    elif isinstance(value, ast.PathValue):
        yield from _path(value, source)
    elif isinstance(value, ast.Succeeded):
        yield from _value(value.target, source)
    elif isinstance(value, ast.ListValue):
        for item in value.items:
            yield from _value(item, source)
    elif isinstance(value, ast.Compare):
        yield from _value(value.left, source)
        yield from _value(value.right, source)
    elif isinstance(value, ast.Not):
        yield from _value(value.operand, source)
    elif isinstance(value, ast.BoolOp):
        for operand in value.operands:
            yield from _value(operand, source)


def _path(value: ast.PathValue, source: SourceFile) -> Iterator[Occurrence]:
    head = value.parts[0]
    start = value.span.offset
    if source.text[start : start + len(head)] == head:  # a path is written without spaces; be sure
        yield _use(head, source.span(start, start + len(head)))


def _reads(string: ast.String, source: SourceFile) -> Iterator[Occurrence]:
    from plait.compiler.rules._placeholders import placeholders

    for placeholder in placeholders(string, {source.path: source}):
        if placeholder.problem == "expression":
            yield from _expression_reads(placeholder, string, source)
            continue
        if placeholder.problem is not None:
            continue
        span = placeholder.span
        head = placeholder.parts[0]
        # The span is the string's own when escapes moved the braces: then the read cannot be placed.
        if span != string.span and source.text[span.offset : span.offset + len(head)] == head:
            yield _use(head, source.span(span.offset, span.offset + len(head)))


def _expression_reads(placeholder: "Placeholder", string: ast.String, source: SourceFile) -> Iterator[Occurrence]:
    """The heads of the paths an expression reads (`{{ len(plan.tasks) }}` reads `plan`), where they are written."""
    import re

    from plait.compiler.expressions import reads

    text, at = placeholder.path, 0
    for parts in reads(text):
        found = re.compile(r"(?<![\w.'\"])" + re.escape(parts[0]) + r"(?![\w'\"])").search(text, at)
        if found is None:
            continue
        at = found.end()
        span = placeholder.part(found.start(), found.end())
        if span != string.span and source.text[span.offset : span.end_offset] == parts[0]:
            yield _use(parts[0], span)
