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
        """The document's own declarations, in order."""
        module = self._own()
        return tuple(_symbol(d, self.sources[self.path]) for d in declarations(module)) if module else ()

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
        """The attribute key under the cursor, described from its kind record (None elsewhere)."""
        module = self._own()
        for decl in declarations(module) if module else ():
            span = getattr(decl, "span", None)
            if span is not None and span.offset <= offset <= span.end_offset:
                return _attribute_doc(decl, offset)
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
    return Analysis(path, diagnostics, compiled.sources, compiled.modules, workspace)


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
