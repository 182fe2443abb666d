"""A template path under the cursor → the hover of the field it names there: its type and description.

`tasks` in `{{plan.tasks}}` (or in `{{ len(plan.tasks) }}`, or written as a
value: a route's `on input.category`, a map's `over = plan.tasks`) is a field of
`plan`'s declared output; hovering it shows `plan.tasks: list[string]` and the
field's description, as hovering `plan` shows the step. A path reads fields
from a runnable's declared output (a chain's or a loop's is its last
element's), from `run.input...` (the `input` block), from `state...`, and
from `input...`: what arrives at the runnable written around it, as the
compile placed it (a runnable placed in several places shows the field of
each place that has it, once).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from plait.core import types as t
from plait.core.source import SourceFile, Span
from plait.dsl import ast

from .complete import _record  # a declaration's record, read as completion reads it for its fields
from .index import declarations

__all__ = ["field_hover"]


def field_hover(
    modules: tuple[ast.Module, ...],
    source: SourceFile,
    offset: int,
    inputs: Mapping[str, tuple[t.Type, ...]] | None = None,
) -> str | None:
    """Markdown for the field of a template path at `offset` in the document (the first module), or None.

    `inputs` (the compile's: runnable name -> what arrives as its `{{input}}` at each place) types `input...`."""
    if not modules or modules[0].file != source.path:
        return None
    for owner, parts, spans in _paths_at(modules[0], source, offset):
        index = next((i for i, span in enumerate(spans) if span.offset <= offset < span.end_offset), None)
        if index is None or index == 0:
            return None  # the head is a name, hovered as its declaration
        if parts[0] == "input":
            return _describe_input(parts[: index + 1], (inputs or {}).get(owner, ()))
        declared = {d.name.name: d for m in modules for d in declarations(m)}  # type: ignore[union-attr]
        return _describe(parts[: index + 1], declared, list(modules))
    return None


def _paths_at(module: ast.Module, source: SourceFile, offset: int) -> Iterator[tuple[str, list[str], list[Span]]]:
    """The template paths written around `offset`, each with its declaration's name and each part's span."""
    from plait.compiler.expressions import reads
    from plait.compiler.passes.check_flow import template_strings
    from plait.compiler.rules._placeholders import placeholders

    for decl in declarations(module):
        span = getattr(decl, "span", None)
        if span is None or not span.offset <= offset <= span.end_offset:
            continue
        for path in _written_paths(decl):  # `route r on input.category`, `over = plan.tasks`
            if path.span.offset <= offset <= path.span.end_offset:
                spans, start = [], path.span.offset
                for part in path.parts:
                    spans.append(source.span(start, start + len(part)))
                    start += len(part) + 1
                yield decl.name.name, list(path.parts), spans  # type: ignore[union-attr]
        for string in template_strings(decl):
            if not string.span.offset <= offset <= string.span.end_offset:
                continue
            for placeholder in placeholders(string, {source.path: source}):
                if placeholder.problem is None:
                    found = [(placeholder.parts, 0)]
                elif placeholder.problem == "expression":
                    found = list(_written(placeholder.path, reads(placeholder.path)))
                else:
                    continue
                for parts, at in found:
                    spans, start = [], at
                    for part in parts:
                        spans.append(placeholder.part(start, start + len(part)))
                        start += len(part) + 1
                    if spans and spans[0] != string.span and spans[0].offset <= offset <= spans[-1].end_offset:
                        yield decl.name.name, parts, spans  # type: ignore[union-attr]


def _written_paths(decl: ast.Decl) -> Iterator[ast.PathValue]:
    """The dotted paths written as values in a declaration (not in a template): a route's subject, an attribute's
    value (a map's `over`)."""
    from plait.compiler.passes._blocks import body_of

    subject = getattr(decl, "subject", None)
    if isinstance(subject, ast.PathValue):
        yield subject
    body = body_of(decl)
    for entry in body.attributes if body is not None else ():
        value = getattr(entry, "value", None)  # a long block's packed literals hold no path
        if isinstance(value, ast.PathValue):
            yield value


def _written(text: str, paths: list[tuple[str, ...]]) -> Iterator[tuple[list[str], int]]:
    """Where each path an expression reads is written in it (`plan.tasks` in `len(plan.tasks)`), as written."""
    at = 0
    for parts in paths:
        found = re.compile(r"(?<![\w.'\"])" + r"\.".join(map(re.escape, parts)) + r"(?![\w'\"])").search(text, at)
        if found is not None:
            at = found.end()
            yield list(parts), found.start()


def _describe(parts: list[str], declared: dict[str, ast.Decl], modules: list[ast.Module]) -> str | None:
    head, rest = parts[0], parts[1:]
    if head == "run" and rest[:1] == ["input"]:
        record, head, rest = _record("input", declared, modules), "run.input", rest[1:]
    elif head == "state":
        record = _record("state", declared, modules)
    else:
        record = _output(head, declared, modules)
    if record is None or not rest:
        return None
    parent = t.lookup(record, rest[:-1])
    if parent is None:
        return None
    field = _field(t.strip_optional(parent), rest[-1])
    if field is None:
        return None
    return _shown(parts, field)


def _describe_input(parts: list[str], received: tuple[t.Type, ...]) -> str | None:
    """`input.a.b` in a runnable: the field at each place it runs (the same declaration shown once)."""
    shown: list[str] = []
    for record in received:
        parent = t.lookup(record, parts[1:-1])
        field = _field(t.strip_optional(parent), parts[-1]) if parent is not None else None
        if field is None:
            continue
        text = _shown(parts, field)
        if text not in shown:
            shown.append(text)
    if len(shown) > 1:
        shown.insert(0, f"Placed in {len(shown)} places, it receives:")
    return "\n\n".join(shown) or None


def _shown(parts: list[str], field: t.FieldType) -> str:
    """The hover of one field: the path and its type, then its description."""
    typed = t.describe(field.type) + ("?" if field.optional else "")
    return f"```plait\n{'.'.join(parts)}: {typed}\n```" + (f"\n\n{field.description}" if field.description else "")


def _field(shape: t.Type, name: str) -> t.FieldType | None:
    """The declaration of field `name` of a record, or of the first record of a union that declares it."""
    if isinstance(shape, t.ListType):
        return None
    if isinstance(shape, t.ObjectType):
        return shape.get(name)
    if isinstance(shape, t.UnionType):
        for option in shape.options:
            found = _field(t.strip_optional(option), name)
            if found is not None:
                return found
    return None


def _output(name: str, declared: dict[str, ast.Decl], modules: list[ast.Module]) -> t.Type | None:
    """The declared output of runnable `name` (a chain's or a loop's last element's), None when undeclared."""
    seen: set[str] = set()
    decl = declared.get(name)
    while isinstance(decl, ast.ChainDecl | ast.LoopDecl) and name not in seen:
        seen.add(name)
        elements = decl.elements if isinstance(decl, ast.ChainDecl) else decl.body
        last = elements[-1] if elements else None
        if not isinstance(last, ast.ChainRef):
            return None
        name, decl = last.name, declared.get(last.name)
    return _record(name, declared, modules)
