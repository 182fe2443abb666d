"""`plait lsp`: LSP messages on stdio → compiler/ide.py answers → LSP replies (pygls, the `lsp` extra).

Features: diagnostics on open, change (debounced) and save, for the document
and the files it imports, exactly as `plait check` reports them (suppressions
and project configuration included); hover (the declaration named under the
cursor, and a diagnostic's explanation); go-to-definition across imports;
document symbols; formatting through `plait fmt`'s formatter. Only this
command imports pygls, so `pip install plait[lsp]` is needed for it alone.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from plait.cli import EXIT_OK, EXIT_USAGE

#: Seconds of quiet after a keystroke before the document is checked again.
DEBOUNCE = 0.25


def register(parser: argparse.ArgumentParser) -> None:
    # Editors pass --stdio by convention (vscode-languageclient does); stdio is the only transport.
    parser.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (the default and only mode)")
    parser.epilog = "Needs the `lsp` extra: pip install 'plait[lsp]'."


def run(args: argparse.Namespace) -> int:
    try:
        server = build()
    except ImportError as exc:
        print(f"plait lsp: needs pygls ({exc.name}); install it with `pip install 'plait[lsp]'`", file=sys.stderr)
        return EXIT_USAGE
    server.start_io()
    return EXIT_OK


def build():
    """The pygls server with every feature registered."""
    from lsprotocol import types as lsp
    from pygls.lsp.server import LanguageServer

    from plait import __version__
    from plait.compiler import ide

    server = LanguageServer("plait", __version__)
    analyses: dict[str, ide.Analysis] = {}
    pending: dict[str, asyncio.Task] = {}
    #: Files we published diagnostics for, per document, so a fixed import's problems are cleared.
    published: dict[str, set[str]] = {}

    def document(uri: str):
        return server.workspace.get_text_document(uri)

    def refresh(uri: str) -> None:
        doc = document(uri)
        analysis = ide.analyse(doc.source, doc.path)
        analyses[uri] = analysis
        files = set()
        for file, found in analysis.diagnostics.items():
            target = uri if file == doc.path else _uri(file)
            source = analysis.sources.get(file)
            items = [_diagnostic(d, source, lsp) for d in found] if source else []
            server.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=target, diagnostics=items))
            files.add(target)
        for stale in published.get(uri, set()) - files:
            server.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=stale, diagnostics=[]))
        published[uri] = files

    async def later(uri: str) -> None:
        await asyncio.sleep(DEBOUNCE)
        refresh(uri)

    def current(uri: str) -> ide.Analysis:
        doc = document(uri)
        analysis = analyses.get(uri)
        if analysis is None or analysis.sources.get(doc.path) is None or analysis.sources[doc.path].text != doc.source:
            refresh(uri)  # a request arrived inside the debounce window: answer on the text as it is now
        return analyses[uri]

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: lsp.DidOpenTextDocumentParams) -> None:
        refresh(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(params: lsp.DidSaveTextDocumentParams) -> None:
        refresh(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: lsp.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri in pending:
            pending[uri].cancel()
        pending[uri] = asyncio.ensure_future(later(uri))

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: lsp.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        analyses.pop(uri, None)
        for target in published.pop(uri, set()):
            server.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=target, diagnostics=[]))

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    def hover(params: lsp.HoverParams) -> lsp.Hover | None:
        doc = document(params.text_document.uri)
        text = current(params.text_document.uri).hover(doc.offset_at_position(params.position))
        if text is None:
            return None
        return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text))

    @server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
    def definition(params: lsp.DefinitionParams) -> lsp.Location | None:
        uri = params.text_document.uri
        analysis = current(uri)
        symbol = analysis.definition(document(uri).offset_at_position(params.position))
        if symbol is None:
            return None
        source = analysis.sources[symbol.name_span.file]
        target = uri if symbol.name_span.file == analysis.path else _uri(symbol.name_span.file)
        return lsp.Location(uri=target, range=_range(symbol.name_span, source, lsp))

    @server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def symbols(params: lsp.DocumentSymbolParams) -> list[lsp.DocumentSymbol]:
        analysis = current(params.text_document.uri)
        source = analysis.sources[analysis.path]
        return [
            lsp.DocumentSymbol(
                name=s.name,
                detail=s.kind,
                kind=getattr(lsp.SymbolKind, SYMBOL_KINDS.get(s.kind, "Object")),
                range=_range(s.span, source, lsp),
                selection_range=_range(s.name_span, source, lsp),
            )
            for s in analysis.outline
        ]

    @server.feature(lsp.TEXT_DOCUMENT_FORMATTING)
    def formatting(params: lsp.DocumentFormattingParams) -> list[lsp.TextEdit] | None:
        doc = document(params.text_document.uri)
        formatted = ide.format_document(doc.source, doc.path)
        if formatted is None or formatted == doc.source:
            return None if formatted is None else []
        lines = doc.source.split("\n")
        end = lsp.Position(line=len(lines) - 1, character=_utf16(lines[-1]))
        return [lsp.TextEdit(range=lsp.Range(start=lsp.Position(line=0, character=0), end=end), new_text=formatted)]

    return server


#: Declaration kind → the name of its LSP SymbolKind (names, so importing this module needs no lsprotocol).
SYMBOL_KINDS = {
    "model": "Constant",
    "tool": "Function",
    "mcp": "Package",
    "agent": "Class",
    "step": "Method",
    "chain": "Module",
    "parallel": "Struct",
    "consolidate": "Interface",
    "route": "Enum",
    "loop": "Event",
    "map": "Array",
    "ask": "Field",
}


def _uri(path: str) -> str:
    from pathlib import Path

    return Path(path).absolute().as_uri()


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _position(line: int, column: int, source, lsp):
    """A 1-based line and code-point column → the LSP's 0-based line and UTF-16 character."""
    return lsp.Position(line=max(line - 1, 0), character=_utf16(source.line_text(line)[: max(column - 1, 0)]))


def _range(span, source, lsp):
    return lsp.Range(
        start=_position(span.line, span.column, source, lsp), end=_position(span.end_line, span.end_column, source, lsp)
    )


def _diagnostic(d, source, lsp):
    severity = {"error": lsp.DiagnosticSeverity.Error, "warning": lsp.DiagnosticSeverity.Warning}.get(
        str(d.severity), lsp.DiagnosticSeverity.Information
    )
    message = d.message + "".join(f"\nnote: {n}" for n in d.notes) + (f"\nhelp: {d.fix.message}" if d.fix else "")
    return lsp.Diagnostic(
        range=_range(d.span, source, lsp), message=message, severity=severity, code=d.code, source="plait"
    )
