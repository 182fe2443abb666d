"""LSP messages on stdio → plait.ide answers → LSP replies: the language server `plait lsp` starts (pygls).

Features: diagnostics on open, change and save, for the document and the
files it imports, exactly as `plait check` reports them (suppressions and
project configuration included), against the editor's unsaved buffers;
hover (the declaration named under the cursor, and a diagnostic's
explanation); go-to-definition and find-references across imports;
completion; rename across files; document symbols; formatting through
`plait fmt`'s formatter. Only this module imports pygls (the `lsp` extra),
and only inside `build()`.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

#: Seconds to wait after a check before checking again: keystrokes typed meanwhile make one check, not one each.
#: The first keystroke after a quiet spell is checked at once (its latency is the check's, see bench/lsp_bench.py).
QUIET = 0.05


def build() -> Any:
    """The pygls server with every feature registered."""
    from lsprotocol import types as lsp
    from pygls.exceptions import JsonRpcException
    from pygls.lsp.server import LanguageServer
    from pygls.uris import to_fs_path

    from plait import __version__
    from plait.dsl.loader import resolve_path

    from . import analysis as ide
    from . import complete as ide_complete
    from . import refs as ide_refs
    from .workspace import Workspace

    server = LanguageServer("plait", __version__)
    # A refused rename is an answer, not a fault: pygls would log it with a traceback.
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_Refusals(JsonRpcException))
    # A message that is not JSON is the client's fault: one line on stderr (the editor's output pane), no traceback;
    # pygls skips it and goes on serving.
    for name in ("pygls.server", "pygls.io_"):  # the read loop logs with the server module's logger
        logging.getLogger(name).addFilter(_OneLine())
    state: dict[str, Any] = {}
    analyses: dict[str, ide.Analysis] = {}
    #: Per document, the files its last check read (resolved), so an edit to one re-checks its importers.
    reads: dict[str, set[Path]] = {}
    #: Files we published diagnostics for, per document, so a fixed import's problems are cleared.
    published: dict[str, set[str]] = {}
    #: Open documents' URIs by resolved path: edits and locations use the client's own URI for a file.
    uris: dict[Path, str] = {}
    dirty: set[str] = set()

    def workspace() -> Workspace:
        if "workspace" not in state:
            state["workspace"] = Workspace()
        ws: Workspace = state["workspace"]
        # Read each time: the client may add or remove folders (workspace/didChangeWorkspaceFolders).
        folders = [resolve_path(p) for f in server.workspace.folders.values() if (p := to_fs_path(f.uri))]
        root = server.workspace.root_path
        ws.folders = tuple(folders or ([resolve_path(root)] if root else []))
        return ws

    def document(uri: str) -> Any:
        return server.workspace.get_text_document(uri)

    def uri_of(path: Path | str) -> str:
        resolved = resolve_path(path)
        return uris.get(resolved) or Path(path).absolute().as_uri()

    def sync(uri: str) -> None:
        """The workspace's buffer for `uri` is the editor's text now; this document and its importers are due a check."""
        doc = document(uri)
        resolved = resolve_path(doc.path)
        uris[resolved] = uri
        workspace().set(doc.path, doc.source)
        dirty.add(uri)
        dirty.update(other for other, files in reads.items() if resolved in files and other in analyses)
        if state.get("worker") is None or state["worker"].done():
            state["worker"] = asyncio.ensure_future(drain())

    async def drain() -> None:
        while dirty:
            for uri in sorted(dirty):
                dirty.discard(uri)
                if uri in uris.values():
                    refresh(uri)
            await asyncio.sleep(QUIET)

    def refresh(uri: str) -> None:
        doc = document(uri)
        analysis = ide.document(workspace(), doc.path)
        analyses[uri] = analysis
        reads[uri] = {resolve_path(file) for file in analysis.sources}
        files = set()
        # An open file's problems are its own check's (as `plait check FILE` gives them), never an importer's view.
        others = set(uris.values()) - {uri}
        for file, found in analysis.diagnostics.items():
            target = uri if file == doc.path else uri_of(file)
            if target in others:
                continue
            source = analysis.sources.get(file)
            items = [_diagnostic(d, source, lsp) for d in found] if source else []
            server.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=target, diagnostics=items))
            files.add(target)
        for stale in published.get(uri, set()) - files - others:
            server.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=stale, diagnostics=[]))
        published[uri] = files

    def current(uri: str) -> ide.Analysis:
        doc = document(uri)
        analysis = analyses.get(uri)
        if analysis is None or analysis.sources.get(doc.path) is None or analysis.sources[doc.path].text != doc.source:
            workspace().set(doc.path, doc.source)
            refresh(uri)  # a request arrived before the check: answer on the text as it is now
        return analyses[uri]

    def where(params: Any) -> tuple[Any, Path, int]:
        """The project now, the document's resolved path, and the cursor's offset in it."""
        doc = document(params.text_document.uri)
        workspace().set(doc.path, doc.source)
        return workspace().project(), resolve_path(doc.path), doc.offset_at_position(params.position)

    def location(project: Any, file: Path, span: Any) -> Any:
        source = project.file(file)[0]
        return lsp.Location(uri=uri_of(file), range=_range(span, source, lsp))

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: lsp.DidOpenTextDocumentParams) -> None:
        sync(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(params: lsp.DidSaveTextDocumentParams) -> None:
        sync(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: lsp.DidChangeTextDocumentParams) -> None:
        sync(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: lsp.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        path = next((p for p, u in uris.items() if u == uri), None)
        if path is not None:
            del uris[path]
            workspace().close(path)  # the disk is the truth again for its importers
            dirty.update(other for other, files in reads.items() if path in files and other in analyses)
        analyses.pop(uri, None)
        reads.pop(uri, None)
        for target in published.pop(uri, set()) - set(uris.values()):
            server.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=target, diagnostics=[]))
        if dirty and (state.get("worker") is None or state["worker"].done()):
            state["worker"] = asyncio.ensure_future(drain())

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
        target = uri if symbol.name_span.file == analysis.path else uri_of(symbol.name_span.file)
        return lsp.Location(uri=target, range=_range(symbol.name_span, source, lsp))

    @server.feature(lsp.TEXT_DOCUMENT_REFERENCES)
    def references(params: lsp.ReferenceParams) -> list[lsp.Location] | None:
        project, path, offset = where(params)
        target = ide_refs.target_at(project, path, offset)
        if target is None:
            return None
        found = ide_refs.references(project, target, include_declaration=params.context.include_declaration)
        return [location(project, file, occ.span) for file, occ in found]

    @server.feature(lsp.TEXT_DOCUMENT_PREPARE_RENAME)
    def prepare_rename(params: lsp.PrepareRenameParams) -> lsp.PrepareRenamePlaceholder:
        project, path, offset = where(params)
        try:
            target = ide_refs.rename_target(project, path, offset)
        except ide_refs.RenameError as exc:
            raise JsonRpcException(str(exc), code=lsp.LSPErrorCodes.RequestFailed) from None
        occ = target.occurrence
        return lsp.PrepareRenamePlaceholder(range=location(project, path, occ.span).range, placeholder=occ.name)

    @server.feature(lsp.TEXT_DOCUMENT_RENAME)
    def rename(params: lsp.RenameParams) -> lsp.WorkspaceEdit:
        project, path, offset = where(params)
        try:
            edits = ide_refs.rename(project, path, offset, params.new_name)
        except ide_refs.RenameError as exc:
            raise JsonRpcException(str(exc), code=lsp.LSPErrorCodes.RequestFailed) from None
        return lsp.WorkspaceEdit(
            changes={
                uri_of(file): [
                    lsp.TextEdit(range=location(project, file, occ.span).range, new_text=new) for occ, new in found
                ]
                for file, found in edits.items()
            }
        )

    @server.feature(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=[".", "{", "[", "("]))
    def completion(params: lsp.CompletionParams) -> list[lsp.CompletionItem]:
        project, path, offset = where(params)
        text = document(params.text_document.uri).source
        found = ide_complete.complete(text, offset, project.declared(path), project.seen_modules(path))
        return [
            lsp.CompletionItem(
                label=item.label,
                kind=_completion_kind(item, lsp),
                detail=item.detail or None,
                documentation=item.doc or None,
            )
            for item in found
        ]

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


class _Refusals(logging.Filter):
    """Drops pygls's log record of a request we refused on purpose (a JsonRpcException we raised)."""

    def __init__(self, kind: type) -> None:
        super().__init__()
        self.kind = kind

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], self.kind))


class _OneLine(logging.Filter):
    """Turns a logged exception into one line: its message, the exception's type and text, no traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            record.msg = f"plait lsp: {record.getMessage()}: {type(exc).__name__}: {exc}".replace("\n", " ")
            record.args = None
            record.exc_info = None
            record.exc_text = None
        return True


def _completion_kind(item: Any, lsp: Any) -> Any:
    """A declaration's kind shows as its outline symbol does (where the protocol has that kind), the rest by role."""
    if item.kind == "declaration" and hasattr(lsp.CompletionItemKind, SYMBOL_KINDS.get(item.detail, "")):
        return getattr(lsp.CompletionItemKind, SYMBOL_KINDS[item.detail])
    return getattr(lsp.CompletionItemKind, COMPLETION_KINDS.get(item.kind, "Text"))


#: Completion kind (src/plait/ide/complete.py) → the name of its LSP CompletionItemKind.
COMPLETION_KINDS = {
    "declaration": "Reference",
    "attribute": "Property",
    "block": "Struct",
    "field": "Field",
    "value": "Value",
    "keyword": "Keyword",
}


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
    "type": "TypeParameter",
    "thread": "Variable",
    # A test passes or fails.
    "test": "Boolean",
}


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
