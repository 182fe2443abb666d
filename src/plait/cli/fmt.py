"""`plait fmt [--check|--diff] PATH...`: specs → the same specs in the canonical layout.

Exit codes follow src/plait/cli/__init__.py's table, as `plait check` does: a file with
syntax errors is reported and left untouched, and a file that cannot be read is
a P005 diagnostic (both exit 1); `--check`/`--diff` exit 1 when a file would
change; a folder with no specs is a usage error (exit 2). Only syntax matters
here: a spec `plait check` rejects for its meaning formats like any other.
No path formats the current directory, searched as `plait check` searches it.
Files are replaced atomically (a temporary file beside them, then a rename), so
a crash never truncates one. `-` formats standard input to standard output.
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
import tempfile
from pathlib import Path

from plait.cli import EXIT_ERRORS, EXIT_OK, EXIT_USAGE, print_diagnostics
from plait.term import clean

STDIN = "-"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="spec files or directories (`-` for stdin; default: the current directory)",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--check", action="store_true", help="change nothing; list files that would change, exit 1 if any"
    )
    mode.add_argument("--diff", action="store_true", help="change nothing; print a unified diff, exit 1 if any")


def run(args: argparse.Namespace) -> int:
    paths = args.paths or ["."]
    files, empty = _expand(paths)
    if not files:
        print(clean("plait fmt: no .plait files found under " + ", ".join(f"`{p}`" for p in empty)), file=sys.stderr)
        return EXIT_USAGE
    for folder in empty:
        print(clean(f"plait fmt: warning: no .plait files under `{folder}`"), file=sys.stderr)
    status = EXIT_OK
    for path in files:
        status = max(status, _one(path, args))
    return status


def _expand(paths: list[str]) -> tuple[list[str], list[str]]:
    """Files as given, directories as the specs under them (sorted); and the directories with none."""
    from plait.dsl.discover import spec_files

    out: list[str] = []
    empty: list[str] = []
    for path in paths:
        if path != STDIN and Path(path).is_dir():
            found = [str(p) for p in spec_files(path)]
            out.extend(found)
            if not found:
                empty.append(path)
        else:
            out.append(path)
    return out, empty


def _one(path: str, args: argparse.Namespace) -> int:
    from plait.dsl.formatter import FormatterBug, format_text

    name = "<stdin>" if path == STDIN else path
    shown = clean(name)  # a file name can hold escape sequences: shown, never obeyed
    if path == STDIN:
        try:
            text = sys.stdin.buffer.read().decode("utf-8")
        except UnicodeDecodeError as exc:
            print(f"plait fmt: cannot read {shown}: {clean(_reason(exc))}", file=sys.stderr)
            return EXIT_ERRORS
        from plait.dsl.loader import text_problem

        # The size cap and NUL rule of `plait check` hold for stdin too: fmt never rewrites what check rejects.
        if (refused := text_problem(text, name)) is not None:
            print_diagnostics([refused], {}, summary=False)
            return EXIT_ERRORS
    else:
        from plait.dsl.loader import read_source

        # A file that cannot be read is a spec error, reported as `plait check` reports it (P005, exit 1).
        source, problem = read_source(path)
        if source is None:
            print_diagnostics([problem], {}, summary=False)
            return EXIT_ERRORS
        text = source.text
    try:
        formatted, diagnostics = format_text(text, name)
    except FormatterBug as exc:
        print(clean(f"plait fmt: internal error, {shown} left as it is: {exc}"), file=sys.stderr)
        return EXIT_USAGE
    if formatted is None:
        _report(diagnostics, text, name)
        return EXIT_ERRORS
    changed = formatted != text
    if args.check:
        if changed:
            print(f"would reformat {shown}")
        return EXIT_ERRORS if changed else EXIT_OK
    if args.diff:
        if changed:
            # A string may hold a control character raw: the diff shows it as an escape, never sends it.
            lines = difflib.unified_diff(
                text.splitlines(keepends=True), formatted.splitlines(keepends=True), f"a/{name}", f"b/{name}"
            )
            sys.stdout.write(clean("".join(lines)))
        return EXIT_ERRORS if changed else EXIT_OK
    if path == STDIN:
        sys.stdout.write(formatted)
    elif changed:
        try:
            _write_atomically(Path(path), formatted)
        except OSError as exc:
            print(f"plait fmt: cannot write {shown}: {clean(_reason(exc))}", file=sys.stderr)
            return EXIT_USAGE
        print(f"reformatted {shown}", file=sys.stderr)
    return EXIT_OK


def _reason(exc: Exception) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text (bad byte at offset {exc.start})"
    return getattr(exc, "strerror", None) or str(exc)


def _report(diagnostics: list, text: str, name: str) -> None:
    """Syntax errors as `plait check` shows them: the line, carets, what was expected."""
    from plait.core.source import SourceFile

    print_diagnostics(diagnostics, {name: SourceFile(name, text)}, summary=False)


def _write_atomically(path: Path, text: str) -> None:
    """Write beside the file, then rename over it: readers see the old or the new spec, never half."""
    target = Path(os.path.realpath(path))
    mode = target.stat().st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
