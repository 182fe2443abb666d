"""Checked declarations → every runnable's output type (`ctx.types`), and the run's input and state records.

A step or agent returns text unless it declares `output`; a code step what its
`output` says (text without one); an ask its `answer`; a parallel a record of
its branches; a consolidate text (the judge's summary); a chain and a loop
their last element's; a route the union of its cases'; a map a list of its
body's; a record builder (a step with `with` alone) the record it binds. A
chain that contains itself (reported by validate_graph) is `any`.
"""

from __future__ import annotations

from plait.core import types as t
from plait.core.codes import declare, make
from plait.core.diagnostics import Fix, Label, Severity
from plait.dsl import ast

from ..bindings import heads as binding_heads
from ..bindings import is_builder, static_record
from ..context import CompileContext
from ..types import block_type, output_type
from ._blocks import body_of
from ..draft import NOTHING

# The codes this module raises; their documentation is explain/<code>.md beside it.
P209 = declare(
    "P209", "malformed-output", Severity.ERROR, "an `output` or `answer` with no fields, or a field with a default"
)

__all__ = ["declared_types", "infer_types", "members"]

#: The typed block that declares each kind's output.
_OUTPUT_BLOCK = {"agent": "output", "step": "output", "ask": "answer"}


def _typed(block: ast.Block | None, keyword: str) -> ast.Params | None:
    for params in block.params if block else ():
        if getattr(params, "keyword", "params") == keyword:
            return params
    return None


def _well_formed(ctx: CompileContext, owner: str, params: ast.Params) -> None:
    """P209: an `output`/`answer` with no fields, or with a default (a reply has no defaults)."""
    keyword = getattr(params, "keyword", "output")
    if not params.params and getattr(params, "type", None) is None:
        ctx.diagnostics.append(
            make(
                "P209",
                f"`{keyword}` of `{owner}` declares no fields",
                params.span,
                fix=Fix(f"declare the fields, or remove `{keyword}` to return text"),
            )
        )
    for param in params.params:
        if param.default is not None:
            ctx.diagnostics.append(
                make(
                    "P209",
                    f"`{keyword}` field `{param.name.name}` of `{owner}` has a default",
                    param.default.span,
                    notes=[f"an `{keyword}` is what the reply must contain; mark the field optional with `?` instead"],
                    fix=Fix("remove the default"),
                )
            )


def _defaults_in_reply(ctx: CompileContext, owner: str, params: ast.Params, typed: t.Type, reported: set[int]) -> None:
    """P209 (plait 0.3): a field with a default inside a reply's type, a named type's (`output Flight`, `answer
    list[Flight]`, `output { leg: Flight }`) or a nested record's. A default means what a tool receives when the
    model leaves a parameter out; a reply that leaves a field out is malformed, as for the block's own fields."""
    keyword = getattr(params, "keyword", "output")
    top = typed if params.type is None else None  # the block's own fields: `_well_formed` reports them
    stack, seen = [typed], set()
    while stack:
        shape = stack.pop()
        if id(shape) in seen:
            continue
        seen.add(id(shape))
        if isinstance(shape, t.OptionalType):
            stack.append(shape.inner)
        elif isinstance(shape, t.ListType):
            stack.append(shape.item)
        elif isinstance(shape, t.UnionType):
            stack.extend(reversed(shape.options))
        elif isinstance(shape, t.ObjectType):
            for field in shape.fields:
                if field.has_default and shape is not top and id(field) not in reported and field.span is not None:
                    reported.add(id(field))
                    where = f"type `{shape.name}`" if shape.name else "a record"
                    ctx.diagnostics.append(
                        make(
                            "P209",
                            f"field `{field.name}` of {where} has a default, and the `{keyword}` of `{owner}` uses it",
                            field.span,
                            labels=[Label(params.span, f"`{owner}`'s `{keyword}`")] if params.span else [],
                            notes=[
                                f"an `{keyword}` is what the reply must contain, nested records included: a default"
                                " means something only in a tool's `params` (what the tool receives when the model"
                                " leaves it out); mark the field optional with `?` instead"
                            ],
                            fix=Fix("remove the default"),
                        )
                    )
            stack.extend(reversed([f.type for f in shape.fields]))


def declared_types(ctx: CompileContext) -> dict[str, t.Type]:
    """Each declared `output`/`answer` as a record, with malformed blocks reported."""
    report = ctx.diagnostics.append
    declared: dict[str, t.Type] = {}
    defaulted: set[int] = set()  # a named type's default is reported once, at the first reply that uses it
    for name, decl in ctx.decls.items():
        keyword = _OUTPUT_BLOCK.get(decl.kind)
        params = _typed(body_of(decl), keyword) if keyword else None
        if params is not None:
            _well_formed(ctx, name, params)
            declared[name] = output_type(params, report, ctx.named_types)
            _defaults_in_reply(ctx, name, params, declared[name], defaulted)
    for kind in ("input", "state"):
        decl = ctx.blocks.get(kind)
        if decl is not None:
            setattr(ctx, f"{kind}_type", block_type(decl.fields, report, ctx.named_types))
    return declared


def members(ctx: CompileContext, name: str) -> tuple[str, ...]:
    """The runnables whose outputs make up `name`'s (elements, branches, cases, body), in order."""
    decl = ctx.decls.get(name)
    values = ctx.values.get(name, NOTHING)
    if decl is None:  # an inline parallel
        owner = name.split("/", 1)[0]
        for pid, inline in ctx.inline_parallels.get(owner, ()):
            if pid == name:
                return tuple(b.name for b in inline.branches if b.name in ctx.decls)
        return ()
    kind = decl.kind
    if kind == "chain":
        return tuple(values.get("elements") or ())
    if kind == "parallel":
        return tuple(values.get("branches") or ())
    if kind in ("loop", "map"):
        return tuple(values.get("body") or ())
    if kind == "route":
        return tuple(case.target.name for case in decl.cases if case.target.name in ctx.decls)
    if kind == "agent":  # its hand-off targets: the output is theirs when it hands over (plait 0.3)
        return tuple(values.get("handoff") or ())
    return ()


def _combine(
    ctx: CompileContext,
    name: str,
    parts: tuple[str, ...],
    types: dict[str, t.Type],
    breaks: dict[str, tuple[str, ...]] | None = None,
) -> t.Type:
    decl = ctx.decls.get(name)
    kind = decl.kind if decl is not None else "parallel"
    if kind == "parallel":
        return t.ObjectType(tuple(t.FieldType(p, types[p]) for p in parts))
    if kind == "route":
        return _one_of(ctx, [types[p] for p in parts])
    if not parts:
        return t.ANY
    last = types[parts[-1]]
    if kind == "loop" and breaks:  # left by a `break` (plait 0.3), its output is what the route received
        sources = breaks.get(name, ())
        if sources:
            return t.union_of([last, *(types.get(s, t.ANY) for s in sources)])
    return t.ListType(last) if kind == "map" else last


def _one_of(ctx: CompileContext, options: list[t.Type]) -> t.Type:
    """The output of whichever one ran (a route's case, a hand-off's target): from plait 0.3 a field only some of
    them declare reads as `T?` (0.2 reads only the fields common to all, P402, and keeps doing so)."""
    union = t.union_of(options)
    if isinstance(union, t.UnionType) and ctx.version >= (0, 3):
        return t.UnionType(union.options, partial=True)
    return union


def _break_sources(ctx: CompileContext) -> dict[str, tuple[str, ...]]:
    """Loop → what the routes that `break` out of it receive: the element before each in the chain or body that
    places it (`""`, read as any, when a route comes first and receives what its container did)."""
    leaving: dict[str, set[str]] = {}
    for route, values in ctx.values.items():
        for leave in values.get("breaks", ()):
            leaving.setdefault(route, set()).add(leave.leaves)
    if not leaving:
        return {}
    sources: dict[str, dict[str, None]] = {}
    for values in ctx.values.values():
        elements = values.get("elements") or values.get("body") or ()
        for index, element in enumerate(elements):
            for loop in leaving.get(element, ()):
                sources.setdefault(loop, {})[elements[index - 1] if index else ""] = None
    return {loop: tuple(found) for loop, found in sources.items()}


def infer_types(ctx: CompileContext) -> None:
    declared = declared_types(ctx)
    types = ctx.types
    runnable = [
        n
        for n, d in ctx.decls.items()
        if d.kind in ("agent", "step", "consolidate", "ask", "chain", "parallel", "route", "loop", "map")
    ]
    runnable += [pid for owner in ctx.inline_parallels for pid, _ in ctx.inline_parallels[owner]]
    breaks = _break_sources(ctx)
    # Post-order over members with an explicit stack: chains of chains nest deeper than recursion allows.
    on_stack: set[str] = set()
    for root in runnable:
        if root in types:
            continue
        stack: list[tuple[str, bool]] = [(root, False)]
        while stack:
            name, expanded = stack.pop()
            if name in types:
                continue
            decl = ctx.decls.get(name)
            kind = decl.kind if decl is not None else "parallel"
            if kind == "step" and is_builder(ctx, name):
                # A record builder's fields are the types of what it binds: those runnables' types come first.
                reads = [h for h in binding_heads(ctx, name) if h not in types and h != name and h not in on_stack]
                if expanded or not reads or name in on_stack:
                    on_stack.discard(name)
                    types[name] = static_record(ctx, name, types)
                    continue
                on_stack.add(name)
                stack.append((name, True))
                stack.extend((h, False) for h in reads)
                continue
            parts = members(ctx, name)
            if kind == "agent" and parts and expanded:
                # An agent that may hand over: its own answer or the output of the runnable it handed to, as a
                # route's is the union of its cases (a field only some declare reads as `T?`).
                on_stack.discard(name)
                own = ctx.answers[name] = declared.get(name, t.TEXT)
                types[name] = _one_of(ctx, [own, *(types[p] for p in parts)])
                continue
            if kind in ("agent", "step", "consolidate", "ask") and not (kind == "agent" and parts):
                types[name] = declared.get(name, t.TEXT) if kind != "consolidate" else t.TEXT
                continue
            if expanded:
                on_stack.discard(name)
                types[name] = _combine(ctx, name, parts, types, breaks)
                continue
            if name in on_stack:  # contains itself: P304 says so; its output is unknowable
                types[name] = t.ANY
                continue
            on_stack.add(name)
            stack.append((name, True))
            stack.extend((p, False) for p in reversed(parts) if p not in types)
            if kind == "loop" and breaks:  # what a `break` leaves it with is typed first
                stack.extend((s, False) for s in breaks.get(name, ()) if s and s not in types)
