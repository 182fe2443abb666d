"""Spec text + a position → editor answers: diagnostics as `plait check` reports them, symbols, definitions, hovers.

Pure functions over the compiler's own data (no LSP types, no pygls): the
language server (`plait lsp`) converts these to protocol messages. Positions
here are 0-based code-point offsets into the text; the server converts the
client's line/character units.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from plait.core.diagnostics import Diagnostic
from plait.core.source import SourceFile, Span

__all__ = ["Analysis", "Symbol", "analyse", "check_diagnostics", "format_document"]


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


@dataclass(frozen=True, slots=True)
class Analysis:
    """One compile of an open document, with what the editor asks about it."""

    path: str
    #: Per file (the document and everything it imports), what `plait check` would report there.
    diagnostics: dict[str, list[Diagnostic]]
    sources: dict[str, SourceFile]
    #: Declarations by name, from the document and its imports (imports share one namespace).
    symbols: dict[str, Symbol]
    #: The document's own declarations, in order.
    outline: tuple[Symbol, ...]
    #: (span, name) of every name the document uses or declares, for lookups by position.
    names: tuple[tuple[Span, str], ...]

    def name_at(self, offset: int) -> str | None:
        for span, name in self.names:
            if span.offset <= offset <= span.end_offset:
                return name
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
        symbol = self.definition(offset)
        if symbol is not None:
            lines = [f"```plait\n{symbol.kind} {symbol.name}\n```"]
            if symbol.description:
                lines.append(symbol.description)
            lines += [f"```plait\n{block}\n```" for block in symbol.blocks]
            parts.append("\n\n".join(lines))
        return "\n\n---\n\n".join(parts) or None


def analyse(text: str, path: str) -> Analysis:
    """Compile the document's text (imports read from disk) and index its names."""
    from plait.compiler.pipeline import compile_spec
    from plait.dsl.parser import parse_module

    # Text with no newline could be taken for a file name by compile_spec; one more newline changes no offset.
    result = compile_spec(text if "\n" in text else text + "\n", path=path)
    sources: dict[str, SourceFile] = dict(result.sources)
    sources.setdefault(path, SourceFile(path, text))
    diagnostics = check_diagnostics(result.diagnostics, sources)
    symbols: dict[str, Symbol] = {}
    outline: tuple[Symbol, ...] = ()
    names: list[tuple[Span, str]] = []
    for file, source in sources.items():
        module, _ = parse_module(source)
        if module is None:
            continue
        own = tuple(_symbol(decl, source) for decl in module.declarations if _named(decl))
        for symbol in own:
            symbols.setdefault(symbol.name, symbol)
        if file == path:
            outline = own
            names = _names(module)
    return Analysis(path, diagnostics, sources, symbols, outline, tuple(names))


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


def _named(decl: object) -> bool:
    """A declaration with a name of its own (not `input`, `state` or `import`)."""
    from plait.dsl.ast import Ident

    return isinstance(getattr(decl, "name", None), Ident)


def _symbol(decl, source: SourceFile) -> Symbol:
    description = getattr(decl, "description", None)
    body = getattr(decl, "body", None) or getattr(decl, "block", None)
    blocks = tuple(source.text[p.span.offset : p.span.end_offset] for p in getattr(body, "params", ()) or ())
    if getattr(decl, "kind", "") == "model":
        blocks = (f"= {source.text[decl.target.span.offset : decl.target.span.end_offset]}", *blocks)
    return Symbol(
        decl.name.name,
        decl.kind,
        decl.span,
        decl.name.span,
        description.value if description is not None else None,
        blocks,
    )


def _names(module) -> list[tuple[Span, str]]:
    """Each declaration's name and every reference (values, chain elements) in the module, in text order."""
    from plait.dsl import ast

    found: list[tuple[Span, str]] = []

    def walk(node: object) -> None:
        if isinstance(node, (ast.Ref, ast.ChainRef)):
            found.append((node.span, node.name))
            return
        if isinstance(node, tuple):
            for item in node:
                walk(item)
            return
        if not dataclasses.is_dataclass(node) or isinstance(node, type):
            return
        for f in dataclasses.fields(node):
            if f.name != "span":
                walk(getattr(node, f.name))

    for decl in module.declarations:
        if _named(decl):
            found.append((decl.name.span, decl.name.name))
        walk(decl)
    return sorted(found, key=lambda item: item[0].offset)
