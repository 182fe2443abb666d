"""Root spec path → every module it imports, read, decoded and parsed.

Imports are followed depth-first in source order; each file is loaded once,
so an import cycle is harmless. A path may not leave the root directory
(the directory `plait` was pointed at) — a spec cannot read arbitrary files.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Callable

from . import ast
from plait.core.diagnostics import Diagnostic, Findings, Severity
from .parser import parse_module
from plait.core.record import Record, record
from plait.core.source import SourceFile, Span
from plait.core.codes import declare

# The codes this module raises; their documentation is explain/<code>.md beside it.
P005 = declare("P005", "unreadable-file", Severity.ERROR, "a spec file that cannot be read as UTF-8 text")
P006 = declare("P006", "import-outside-root", Severity.ERROR, "an import that leaves the spec's directory")
P007 = declare("P007", "import-not-found", Severity.ERROR, "an imported file that does not exist")

__all__ = ["LoadResult", "Reader", "load", "load_text", "read_source", "resolve_path", "text_problem"]

#: Larger files are refused before reading: nothing real comes close, and it bounds memory.
MAX_FILE_BYTES = 8 * 1024 * 1024


class LoadResult:
    """The loaded modules, their sources and the load's diagnostics. A plain class: `@dataclass` wrote its
    methods with `exec` at every start of a check."""

    def __init__(
        self,
        modules: list[ast.Module] | None = None,
        sources: dict[str, SourceFile] | None = None,
        diagnostics: Findings | None = None,
        root_dir: Path | None = None,
    ) -> None:
        self.modules: list[ast.Module] = [] if modules is None else modules
        self.sources: dict[str, SourceFile] = {} if sources is None else sources
        self.diagnostics: Findings = Findings() if diagnostics is None else diagnostics
        #: The directory imports may not leave, and relative paths are shown against.
        self.root_dir = root_dir

    def __repr__(self) -> str:
        return f"LoadResult(modules={len(self.modules)}, sources={list(self.sources)}, root_dir={self.root_dir!r})"


@record(kw_only=False)
class Reader(Record):
    """How files become modules. The language server passes its own: unsaved editor buffers
    (`overlay`: resolved path → text, or None to read the disk) and a parse cache (`parse`)."""

    overlay: Callable[[Path], str | None] = lambda path: None
    parse: Callable[[SourceFile], tuple[ast.Module | None, list[Diagnostic]]] = parse_module


_DISK = Reader()


def _file_error(code: str, name: str, message: str, path: str, span: Span | None = None) -> Diagnostic:
    return Diagnostic(code, name, Severity.ERROR, message, span or Span(path, 1, 1, 1, 1, 0, 0))


def _read(path: Path, display: str, via: Span | None) -> tuple[SourceFile | None, Diagnostic | None]:
    try:
        if path.is_dir():
            return None, _file_error(
                "P005", "unreadable-file", f"`{display}` is a directory, not a .plait file", display, via
            )
        info = path.stat()
        # A FIFO or device would block or never end (/dev/zero): only regular files are read.
        if not stat.S_ISREG(info.st_mode):
            return None, _file_error("P005", "unreadable-file", f"`{display}` is not a regular file", display, via)
        if info.st_size > MAX_FILE_BYTES:
            return None, _file_error(
                "P005", "unreadable-file", f"`{display}` is too large ({info.st_size} bytes)", display, via
            )
        with path.open("rb") as handle:
            # The size can change between stat and read; the cap holds anyway.
            data = handle.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            return None, _file_error("P005", "unreadable-file", f"`{display}` is too large", display, via)
    except FileNotFoundError:
        code, name = ("P007", "import-not-found") if via else ("P005", "unreadable-file")
        return None, _file_error(code, name, f"no such file `{display}`", via.file if via else display, via)
    except OSError as exc:
        return None, _file_error("P005", "unreadable-file", f"cannot read `{display}`: {exc.strerror}", display, via)
    except ValueError:
        # A path the OS cannot name: an embedded NUL or a lone surrogate.
        return None, _file_error(
            "P005", "unreadable-file", f"`{ascii(display)[1:-1]}` is not a valid file name", display, via
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        prefix = data[: exc.start].decode("utf-8", "replace")
        source = SourceFile(display, prefix)
        pos = source.position(len(prefix))
        span = Span(display, pos.line, pos.column, pos.line, pos.column + 1, pos.offset, pos.offset + 1)
        return None, _file_error(
            "P005", "unreadable-file", f"invalid UTF-8 (byte 0x{data[exc.start]:02x})", display, span
        )
    problem = text_problem(text, display)
    return (None, problem) if problem is not None else (SourceFile(display, text), None)


def text_problem(text: str, display: str = "<string>") -> Diagnostic | None:
    """The P005 a spec's text gets for what no spec holds (a NUL byte; more than the size cap), or None.

    The same rule for a file, for `plait fmt -` and for `plait.compile(text)`: the cap bounds every later stage."""
    # A character is at most 4 bytes in UTF-8: short text needs no encoding to measure.
    if len(text) * 4 > MAX_FILE_BYTES and (
        len(text) > MAX_FILE_BYTES or len(text.encode("utf-8", "surrogatepass")) > MAX_FILE_BYTES
    ):
        return _file_error(
            "P005", "unreadable-file", f"`{display}` is too large (over {MAX_FILE_BYTES} bytes)", display
        )
    offset = text.find("\x00")
    if offset != -1:
        source = SourceFile(display, text)
        return _file_error(
            "P005",
            "unreadable-file",
            "file contains a NUL byte; is it binary?",
            display,
            source.span(offset, offset + 1),
        )
    return None


def read_source(path: str | os.PathLike) -> tuple[SourceFile | None, Diagnostic | None]:
    """One spec file's text, or the P005 diagnostic `plait check` gives for it (missing, binary, too large...)."""
    return _read(Path(path), str(path), None)


def resolve_path(path: str | os.PathLike) -> Path:
    """`path.resolve()`, or the absolute path when it cannot be resolved (a symlink
    loop, an embedded NUL): reading it then fails with a diagnostic."""
    try:
        return Path(path).resolve()
    except (OSError, ValueError, RuntimeError):
        return Path(os.path.abspath(path))


def load(path: str | os.PathLike) -> LoadResult:
    root = Path(path)
    result = LoadResult(root_dir=resolve_path(root).parent)
    _load_file(root, str(path), None, result, set(), _DISK)
    return result


def load_text(text: str, path: str = "<string>", root_dir: Path | None = None, reader: Reader = _DISK) -> LoadResult:
    """Compile text that is not (yet) a file. Imports resolve against `root_dir` if given."""
    result = LoadResult(root_dir=root_dir)
    problem = text_problem(text, path)
    if problem is not None:
        result.diagnostics.append(problem)
        if problem.span.end_offset:  # the NUL byte's position: the report shows it in the text
            result.sources[path] = SourceFile(path, text)
        return result
    source = SourceFile(path, text)
    # Text standing for a file on disk (an editor's buffer) is that file: an import cycle back to it stops here.
    seen = {resolve_path(path)} if root_dir is not None and Path(path).is_absolute() else set()
    _add(source, None if root_dir is None else root_dir / "<string>", result, seen, reader)
    return result


def _load_file(path: Path, display: str, via: Span | None, result: LoadResult, seen: set[Path], reader: Reader) -> None:
    resolved = resolve_path(path)
    if resolved in seen:
        return
    seen.add(resolved)
    unsaved = reader.overlay(resolved)
    if unsaved is not None:
        problem = text_problem(unsaved, display)
        source, error = (None, problem) if problem is not None else (SourceFile(display, unsaved), None)
    else:
        source, error = _read(path, display, via)
    if source is None:
        if error is not None:
            result.diagnostics.append(error)
        return
    _add(source, resolved, result, seen, reader)


def _add(source: SourceFile, resolved: Path | None, result: LoadResult, seen: set[Path], reader: Reader) -> None:
    result.sources[source.path] = source
    module, diagnostics = reader.parse(source)
    result.diagnostics.extend(diagnostics)
    if module is None:
        return
    result.modules.append(module)
    for decl in module.declarations:
        if isinstance(decl, ast.ImportDecl):
            _follow(decl, resolved, source, result, seen, reader)


def _follow(
    decl: ast.ImportDecl,
    importer: Path | None,
    source: SourceFile,
    result: LoadResult,
    seen: set[Path],
    reader: Reader,
) -> None:
    if importer is None or result.root_dir is None:
        result.diagnostics.append(
            _file_error("P007", "import-not-found", "imports need a spec file on disk", source.path, decl.path.span)
        )
        return
    target = resolve_path(importer.parent / decl.path.value)
    root = result.root_dir
    if not target.is_relative_to(root):
        result.diagnostics.append(
            Diagnostic(
                "P006",
                "import-outside-root",
                Severity.ERROR,
                f"import `{decl.path.value}` leaves the spec's directory",
                decl.path.span,
                notes=(f"imports must stay inside `{root}`",),
            )
        )
        return
    display = os.path.relpath(target, Path.cwd()) if target.is_relative_to(Path.cwd()) else str(target)
    _load_file(target, display, decl.path.span, result, seen, reader)
