"""Open editor buffers + spec files on disk → compiles that see the unsaved buffers, and the project's files.

What a keystroke costs is kept to what changed: each file's parse is cached by
its path and text (an unchanged import is never parsed again, and its names
are indexed once), and a compile reads an open file's unsaved buffer instead
of the disk, so a document importing an edited, unsaved file is checked
against the edit. The project (for references and rename) is every file the
workspace knows: the open documents, the specs under the editor's folders,
and everything they import.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plait.core.diagnostics import Diagnostic
from plait.core.source import SourceFile
from plait.dsl import ast
from plait.dsl.loader import Reader, load_text, read_source, resolve_path

from .index import Occurrence, declarations, occurrences

__all__ = ["MAX_PROJECT_FILES", "Compiled", "Project", "Workspace"]

#: Files a project search reads at most (a home folder opened as a workspace must not stall the editor).
MAX_PROJECT_FILES = 2000


@dataclass(frozen=True, slots=True)
class Compiled:
    """One compile of a document: what `plait check` reports, and the modules it loaded (in load order)."""

    path: str
    diagnostics: list[Diagnostic]
    sources: dict[str, SourceFile]
    modules: tuple[ast.Module, ...]
    #: Runnable name -> the types that arrive as its `{{input}}` (CompileResult.inputs).
    inputs: dict[str, tuple[Any, ...]] = field(default_factory=dict)


@dataclass
class _Parsed:
    text: str
    module: ast.Module | None
    diagnostics: list[Diagnostic]
    index: tuple[Occurrence, ...] | None = None


class Workspace:
    """The editor's view: unsaved buffers over the disk, with parses reused while their text is unchanged."""

    def __init__(self, folders: tuple[Path, ...] = ()) -> None:
        self.folders = folders
        #: Resolved path → the text of the open buffer (saved or not).
        self.buffers: dict[Path, str] = {}
        self._parsed: dict[str, _Parsed] = {}
        #: Resolved path → the last module that parsed, with its source (for completion while the text is broken).
        self._good: dict[Path, tuple[ast.Module, SourceFile]] = {}
        self._reader = Reader(overlay=self.buffers.get, parse=self.parse)

    # --- buffers ---------------------------------------------------------------------

    def set(self, path: str | Path, text: str) -> None:
        self.buffers[resolve_path(path)] = text

    def close(self, path: str | Path) -> None:
        self.buffers.pop(resolve_path(path), None)

    def text(self, path: str | Path) -> str | None:
        """The buffer's text, else the file's on disk, else None."""
        resolved = resolve_path(path)
        if resolved in self.buffers:
            return self.buffers[resolved]
        source, _ = read_source(resolved)
        return None if source is None else source.text

    # --- parsing ---------------------------------------------------------------------

    def parse(self, source: SourceFile) -> tuple[ast.Module | None, list[Diagnostic]]:
        """`parse_module`, reused while the file's text is unchanged (the AST is immutable, so sharing is safe)."""
        from plait.dsl.parser import parse_module

        entry = self._parsed.get(source.path)
        if entry is None or (entry.text is not source.text and entry.text != source.text):
            module, diagnostics = parse_module(source)
            entry = self._parsed[source.path] = _Parsed(source.text, module, diagnostics)
            if module is not None:
                self._good[resolve_path(source.path)] = (module, source)
        return entry.module, list(entry.diagnostics)

    def index(self, module: ast.Module, source: SourceFile) -> tuple[Occurrence, ...]:
        """The module's names (see index.py), computed once per parse."""
        entry = self._parsed.get(source.path)
        if entry is None or entry.module is not module:
            return occurrences(module, source)
        if entry.index is None:
            entry.index = occurrences(module, source)
        return entry.index

    def last_good(self, path: str | Path) -> tuple[ast.Module, SourceFile] | None:
        return self._good.get(resolve_path(path))

    # --- compiling -------------------------------------------------------------------

    def compile(self, path: str) -> Compiled:
        """The document at `path` (its buffer, or the disk) compiled as `plait check` would, imports included."""
        from plait.compiler.pipeline import run_passes
        from plait.dsl.parser import collector_paused

        text = self.text(path) or ""
        resolved = resolve_path(path)
        with collector_paused():
            loaded = load_text(text, path, resolved.parent, self._reader)
            result = run_passes(loaded)
        sources = dict(result.sources)
        sources.setdefault(path, SourceFile(path, text))
        return Compiled(path, result.diagnostics, sources, tuple(loaded.modules), result.inputs)

    def project(self) -> Project:
        return Project(self)


@dataclass
class Project:
    """Every file the workspace knows, parsed now; files are named by their resolved path."""

    workspace: Workspace
    _files: dict[Path, tuple[SourceFile, ast.Module | None]] = field(default_factory=dict)
    _closures: dict[Path, tuple[Path, ...]] = field(default_factory=dict)
    _complete: bool = False

    def file(self, path: Path) -> tuple[SourceFile, ast.Module | None] | None:
        """The file's source and module (None when it does not parse), or None when it cannot be read."""
        if path not in self._files:
            text = self.workspace.text(path)
            if text is None:
                return None
            source = SourceFile(str(path), text)
            module, _ = self.workspace.parse(source)
            self._files[path] = (source, module)
        return self._files[path]

    def imports(self, path: Path) -> list[Path]:
        found = self.file(path)
        if found is None or found[1] is None:
            return []
        return [
            resolve_path(path.parent / d.path.value) for d in found[1].declarations if isinstance(d, ast.ImportDecl)
        ]

    def closure(self, path: Path) -> tuple[Path, ...]:
        """The file and everything it imports, in the compiler's load order (depth first, each once)."""
        if path not in self._closures:
            order: list[Path] = []
            seen: set[Path] = set()
            stack = [path]
            while stack:  # depth first in source order, without recursion (import chains can be long)
                current = stack.pop()
                if current in seen or self.file(current) is None:
                    continue
                seen.add(current)
                order.append(current)
                stack.extend(reversed(self.imports(current)))
            self._closures[path] = tuple(order)
        return self._closures[path]

    def occurrences(self, path: Path) -> tuple[Occurrence, ...]:
        found = self.file(path)
        if found is None or found[1] is None:
            return ()
        return self.workspace.index(found[1], found[0])

    def declaration(self, path: Path, name: str) -> tuple[Path, Occurrence] | None:
        """Where `name` is declared as `path` sees it: the first declaration in load order, as the compiler takes it."""
        for file in self.closure(path):
            for occ in self.occurrences(file):
                if occ.role == "declaration" and occ.name == name:
                    return file, occ
        return None

    def declared(self, path: Path) -> dict[str, ast.Decl]:
        """Every name `path` sees → its declaration (first wins), from the files' last parse that succeeded."""
        out: dict[str, ast.Decl] = {}
        for module in self.seen_modules(path):
            for decl in declarations(module):
                out.setdefault(decl.name.name, decl)  # type: ignore[union-attr]
        return out

    def seen_modules(self, path: Path) -> list[ast.Module]:
        """The closure's modules, each file's last good parse (so completion works while the text is broken)."""
        return [good[0] for file in self.lenient_closure(path) if (good := self.workspace.last_good(file))]

    def lenient_closure(self, path: Path) -> list[Path]:
        """The closure, following a broken file's imports as its last good parse wrote them."""
        order: list[Path] = []
        stack = [path]
        while stack:
            current = stack.pop()
            if current in order:
                continue
            self.file(current)
            good = self.workspace.last_good(current)
            if good is None:
                continue
            order.append(current)
            decls = good[0].declarations
            imports = [resolve_path(current.parent / d.path.value) for d in decls if isinstance(d, ast.ImportDecl)]
            stack.extend(reversed(imports))
        return order

    def known(self) -> list[Path]:
        """The open documents, the specs under the workspace folders, and all they import."""
        if not self._complete:
            from plait.dsl.discover import spec_files

            start = list(self.workspace.buffers)
            for folder in self.workspace.folders:
                start.extend(resolve_path(p) for p in spec_files(folder)[:MAX_PROJECT_FILES])
            for path in start[:MAX_PROJECT_FILES]:
                self.closure(path)
            self._complete = True
        return list(self._files)
