"""Spec text + a position → editor answers: diagnostics as `plait check` reports them, symbols, definitions, hovers.

Pure functions over the compiler's own data (no LSP types, no pygls): the
language server (`plait lsp`) converts these to protocol messages. Positions
here are 0-based code-point offsets into the text; the server converts the
client's line/character units. References, rename and completion are in
src/plait/ide/refs.py and src/plait/ide/complete.py; the buffers and caches in
src/plait/ide/workspace.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from plait.core.diagnostics import Diagnostic
from plait.core.source import SourceFile, Span
from plait.dsl import ast

from .index import Occurrence, declarations, occurrences
from .workspace import Workspace

__all__ = ["Analysis", "Symbol", "analyse", "check_diagnostics", "document", "format_document", "occurrence_at"]


@dataclass(frozen=True, slots=True)
class Symbol:
    name: str
    kind: str
    #: The whole declaration, and its name.
    span: Span
    name_span: Span
    description: str | None
    #: The declaration's typed blocks (`params { ... }`, `output { ... }`) as written.
    blocks: tuple[str, ...] = ()


@dataclass(frozen=True)
class Analysis:
    """One compile of an open document, with what the editor asks about it (indexed only when asked)."""

    path: str
    #: Per file (the document and everything it imports), what `plait check` would report there.
    diagnostics: dict[str, list[Diagnostic]]
    sources: dict[str, SourceFile]
    #: The modules the compile loaded, the document's first (when it parses).
    modules: tuple[ast.Module, ...] = ()
    workspace: Workspace | None = field(default=None, repr=False, compare=False)
    #: Runnable name -> the types that arrive as its `{{input}}`, one per place it runs.
    inputs: dict[str, tuple[Any, ...]] = field(default_factory=dict, repr=False, compare=False)

    @cached_property
    def symbols(self) -> dict[str, Symbol]:
        """Declarations by name, from the document and its imports (imports share one namespace; first wins)."""
        symbols: dict[str, Symbol] = {}
        for module in self.modules:
            for decl in declarations(module):
                symbols.setdefault(decl.name.name, _symbol(decl, self.sources[module.file]))  # type: ignore[union-attr]
        return symbols

    @cached_property
    def outline(self) -> tuple[Symbol, ...]:
        """The document's own declarations, its `input` and `state` blocks and its tests, in order."""
        module = self._own()
        if module is None:
            return ()
        source = self.sources[self.path]
        found = []
        for decl in module.declarations:
            if isinstance(getattr(decl, "name", None), ast.Ident):
                found.append(_symbol(decl, source))
            elif isinstance(decl, ast.InputDecl | ast.StateDecl):  # named by their keyword
                at = decl.span.offset
                fields = source.text[decl.fields.span.offset : decl.fields.span.end_offset]
                found.append(
                    Symbol(decl.kind, decl.kind, decl.span, source.span(at, at + len(decl.kind)), None, (fields,))
                )
        return tuple(found)

    @cached_property
    def names(self) -> tuple[Occurrence, ...]:
        """Every name the document declares or uses, in text order, for lookups by position."""
        module = self._own()
        if module is None:
            return ()
        source = self.sources[self.path]
        return self.workspace.index(module, source) if self.workspace else occurrences(module, source)

    def _own(self) -> ast.Module | None:
        return self.modules[0] if self.modules and self.modules[0].file == self.path else None

    def name_at(self, offset: int) -> str | None:
        occ = occurrence_at(self.names, offset)
        return occ.name if occ else None

    def attribute_at(self, offset: int) -> str | None:
        """The attribute key under the cursor, described from its kind record, or a built-in word there (a budget's
        key, a tool run's function or option, a test's attribute or what an `expect` reads); None elsewhere."""
        module = self._own()
        for decl in module.declarations if module else ():
            span = getattr(decl, "span", None)
            if span is None or not span.offset <= offset <= span.end_offset:
                continue
            if isinstance(decl, ast.TestDecl):
                return _test_doc(decl, offset)
            if isinstance(decl, ast.RouteDecl) and (said := _break_doc(decl, offset)) is not None:
                return said
            if isinstance(getattr(decl, "name", None), ast.Ident):
                return _attribute_doc(decl, offset) or _word_doc(decl, offset)
        return None

    def definition(self, offset: int) -> Symbol | None:
        name = self.name_at(offset)
        return self.symbols.get(name) if name else None

    def hover(self, offset: int) -> str | None:
        """Markdown: the diagnostics under the cursor (with their explanation), then the declaration named there."""
        from plait.core.codes import sections

        parts = []
        for d in self.diagnostics.get(self.path, ()):
            if d.span.offset <= offset <= max(d.span.end_offset, d.span.offset + 1):
                what = sections(d.code).get("What it catches", "").strip()
                parts.append(f"**{d.severity}[{d.code}] {d.name}**: {d.message}\n\n{what}")
        attribute = self.attribute_at(offset)
        if attribute is not None:
            parts.append(attribute)
        from .fields import field_hover  # a field inside a path: `tasks` in `{{plan.tasks}}`

        source = self.sources.get(self.path)
        field = field_hover(self.modules, source, offset, self.inputs) if source is not None else None
        if field is not None:
            parts.append(field)
        symbol = self.definition(offset)
        if symbol is not None:
            lines = [f"```plait\n{symbol.kind} {symbol.name}\n```"]
            if symbol.description:
                lines.append(symbol.description)
            lines += [f"```plait\n{block}\n```" for block in symbol.blocks]
            parts.append("\n\n".join(lines))
        return "\n\n---\n\n".join(parts) or None


def _attribute_doc(decl: Any, offset: int) -> str | None:
    """Markdown for the attribute key of `decl` written at `offset`: its kind record's schema and doc line."""
    from plait.compiler.passes._blocks import body_of
    from plait.compiler.schema import SCHEMAS

    schema = SCHEMAS.get(getattr(decl, "kind", ""), {})
    body = body_of(decl)
    for entry in body.attributes if body else ():
        key = entry.key
        if key.span.offset <= offset <= key.span.end_offset and key.name in schema:
            spec = schema[key.name]
            what = spec.type + (" (required)" if spec.required else "")
            choices = f": {', '.join(f'`{c}`' for c in spec.choices)}" if spec.choices else ""
            return (
                f"```plait\n{decl.kind} {decl.name.name} {{ {key.name} }}\n```\n\n{what}{choices}. {spec.doc}".rstrip()
            )
    return None


def _break_doc(decl: ast.RouteDecl, offset: int) -> str | None:
    """`break` written as a route case's target (plait 0.3): what it does, and which loop it names."""
    for case in decl.cases:
        if case.target.name == "break" and _at(case.target, offset):
            which = (
                f"loop `{case.loop.name}` (and every loop inside it)"
                if case.loop
                else "the innermost loop around the route"
            )
            return _word(
                f"-> break{' ' + case.loop.name if case.loop else ''}",
                f"Leaves {which}: nothing after the route runs and no further iteration starts; the loop's output "
                "is what the route received.",
            )
    return None


def _at(node: Any, offset: int) -> bool:
    span = getattr(node, "span", None)
    return span is not None and span.offset <= offset <= span.end_offset


def _word(title: str, doc: str) -> str:
    return f"```plait\n{title}\n```\n\n{doc}".rstrip()


def _word_doc(decl: Any, offset: int) -> str | None:
    """A word inside an attribute's value: a budget's key, a tool run's function, hosted kind or option."""
    from plait.compiler.passes._blocks import body_of
    from plait.compiler.schema import SCHEMAS

    from . import words

    schema = SCHEMAS.get(getattr(decl, "kind", ""), {})
    body = body_of(decl)
    for entry in body.attributes if body else ():
        spec = schema.get(entry.key.name)
        value = entry.value
        if spec is None or not _at(value, offset):
            continue
        if spec.type == "budget" and isinstance(value, ast.Block):
            for item in value.attributes:
                if _at(item.key, offset) and item.key.name in words.BUDGET_KEYS:
                    return _word(f"budget = {{ {item.key.name} }}", words.BUDGET_KEYS[item.key.name])
        if spec.type == "run" and isinstance(value, ast.Call):
            return _run_doc(value, offset)
        if spec.type == "messages" and isinstance(value, ast.ListValue):
            for message in value.items:
                if isinstance(message, ast.Call) and _at(message.func, offset):
                    role = message.func.name
                    return (
                        _word(f"messages = [{role}(...)]", words.MESSAGE_ROLES[role])
                        if role in words.MESSAGE_ROLES
                        else None
                    )
    return None


def _run_doc(call: ast.Call, offset: int) -> str | None:
    from . import words

    func = call.func.name
    if _at(call.func, offset) and func in words.RUN_FUNCTIONS:
        return _word(f"run = {func}(...)", words.RUN_FUNCTIONS[func])
    first = call.args[0] if call.args else None
    if func == "hosted" and isinstance(first, ast.Ref) and _at(first, offset) and first.name in words.HOSTED_KINDS:
        return _word(f"hosted({first.name})", words.HOSTED_KINDS[first.name])
    options = (
        words.DELEGATE_OPTIONS
        if func == "delegate"
        else words.HOSTED_OPTIONS.get(first.name, {})
        if func == "hosted" and isinstance(first, ast.Ref)
        else {}
    )
    for item in call.block.attributes if call.block is not None else ():
        if _at(item.key, offset) and item.key.name in options:
            return _word(f"{func}(...) {{ {item.key.name} }}", options[item.key.name])
    return None


def _test_doc(decl: ast.TestDecl, offset: int) -> str | None:
    """In a test: its name, an attribute key, and what an `expect` line reads (`case(...)`, `run.X`, `output`)."""
    from . import words

    if _at(decl.name, offset):
        text = f"```plait\ntest {decl.name.name}\n```"
        return text + (f"\n\n{decl.description.value}" if decl.description is not None else "")
    for attribute in decl.attributes:
        if _at(attribute.key, offset) and attribute.key.name in words.TEST_ATTRIBUTES:
            return _word(f"test {decl.name.name} {{ {attribute.key.name} }}", words.TEST_ATTRIBUTES[attribute.key.name])
    for expect in decl.expects:
        if not _at(expect, offset):
            continue
        if offset <= expect.span.offset + len("expect"):
            return _word(
                "expect CONDITION", "a condition on what the run made or did; the test fails when it does not hold"
            )
        if expect.op is not None and _at(expect.op, offset) and expect.op.name in words.EXPECT_WORDS:
            return _word(f"expect SUBJECT {expect.op.name} VALUE", words.EXPECT_WORDS[expect.op.name])
        stack: list[Any] = [expect.subject, expect.value]
        while stack:
            node = stack.pop()
            if not _at(node, offset):
                continue
            if isinstance(node, ast.Call):
                name = node.func.name
                if _at(node.func, offset) and name in words.EXPECT_FUNCTIONS:
                    return _word(f"expect {name}(...)", words.EXPECT_FUNCTIONS[name][1])
                if name == "judge":
                    for item in node.block.attributes if node.block is not None else ():
                        if _at(item.key, offset) and item.key.name in words.JUDGE_OPTIONS:
                            return _word(f"judge(...) {{ {item.key.name} }}", words.JUDGE_OPTIONS[item.key.name])
                stack.extend(node.args)
            elif isinstance(node, ast.PathValue | ast.Ref):
                parts = node.parts if isinstance(node, ast.PathValue) else (node.name,)
                # Only the head and its stat: `run.model_calls`, `output` (a field after it is the spec's).
                if parts[0] == "run" and len(parts) == 2 and parts[1] in words.RUN_STATS:
                    return _word(f"expect run.{parts[1]}", words.RUN_STATS[parts[1]])
                if parts[0] == "output" and offset <= node.span.offset + len("output"):
                    return _word("expect output", "the output of the test's entry (its last runnable's)")
            elif isinstance(node, ast.Compare):
                stack += [node.left, node.right]
            elif isinstance(node, ast.Not):
                stack.append(node.operand)
            elif isinstance(node, ast.BoolOp | ast.ListValue):
                stack.extend(node.operands if isinstance(node, ast.BoolOp) else node.items)
    return None


def occurrence_at(found: tuple[Occurrence, ...], offset: int) -> Occurrence | None:
    """The name written at `offset` (the cursor may sit just after its last character)."""
    for occ in found:
        if occ.span.offset <= offset <= occ.span.end_offset:
            return occ
    return None


def analyse(text: str, path: str) -> Analysis:
    """Compile the document's text (imports read from disk) and index its names."""
    workspace = Workspace()
    workspace.set(path, text)
    return document(workspace, path)


def document(workspace: Workspace, path: str) -> Analysis:
    """The document at `path` compiled against the workspace's buffers, with `plait check`'s filtering."""
    compiled = workspace.compile(path)
    diagnostics = check_diagnostics(compiled.diagnostics, compiled.sources)
    return Analysis(path, diagnostics, compiled.sources, compiled.modules, workspace, compiled.inputs)


def check_diagnostics(diagnostics: list[Diagnostic], sources: dict[str, SourceFile]) -> dict[str, list[Diagnostic]]:
    """What `plait check` reports, per file: inline suppressions applied, then the project configuration."""
    from plait.compiler.project import Resolver, reported
    from plait.compiler.suppress import apply

    configs = Resolver()
    out: dict[str, list[Diagnostic]] = {file: [] for file in sources}
    for d in reported(apply(diagnostics, sources), configs):
        out.setdefault(d.span.file, []).append(d)
    return out


def format_document(text: str, path: str) -> str | None:
    """The canonical layout (`plait fmt`), or None when the text does not parse."""
    from plait.dsl.formatter import format_text

    formatted, _ = format_text(text, path)
    return formatted


def _symbol(decl: Any, source: SourceFile) -> Symbol:
    description = getattr(decl, "description", None)
    body = getattr(decl, "body", None) or getattr(decl, "block", None)
    blocks = tuple(source.text[p.span.offset : p.span.end_offset] for p in getattr(body, "params", ()) or ())
    if getattr(decl, "kind", "") == "model":
        blocks = (f"= {source.text[decl.target.span.offset : decl.target.span.end_offset]}", *blocks)
    if isinstance(decl, ast.TypeDecl):  # its fields, or what it names
        shown = decl.fields if decl.fields is not None else decl.alias
        assert shown is not None
        text = source.text[shown.span.offset : shown.span.end_offset]
        blocks = (text if decl.fields is not None else f"= {text}",)
    return Symbol(
        decl.name.name,
        decl.kind,
        decl.span,
        decl.name.span,
        description.value if description is not None else None,
        blocks,
    )
