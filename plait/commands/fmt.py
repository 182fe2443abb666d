"""`plait fmt [--check|--diff] PATH...`: rewrite specs in the canonical layout.

A file with syntax errors is reported and left untouched (exit 1); a file that
cannot be read is one line on stderr (exit 2). Files are replaced atomically
(a temporary file beside them, then a rename), so a crash never truncates one.
`-` formats standard input to standard output.
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
import tempfile
from pathlib import Path

from plait.cli import EXIT_ERRORS, EXIT_OK, EXIT_USAGE, print_diagnostics

STDIN = "-"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help="spec files or directories (`-` for stdin)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="change nothing; list files that would change, exit 1 if any")
    mode.add_argument("--diff", action="store_true", help="change nothing; print a unified diff, exit 1 if any")


def run(args: argparse.Namespace) -> int:
    status = EXIT_OK
    for path in _expand(args.paths):
        status = max(status, _one(path, args))
    return status


def _expand(paths: list[str]) -> list[str]:
    """Files as given; directories become the `*.plait` files under them, sorted."""
    from plait.dsl.discover import spec_files

    out: list[str] = []
    for path in paths:
        if path != STDIN and Path(path).is_dir():
            out.extend(str(p) for p in spec_files(path))
        else:
            out.append(path)
    return out


def _one(path: str, args: argparse.Namespace) -> int:
    from plait.dsl.formatter import FormatterBug, format_text

    name = "<stdin>" if path == STDIN else path
    try:
        data = sys.stdin.buffer.read() if path == STDIN else Path(path).read_bytes()
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        print(f"plait fmt: cannot read {name}: {_reason(exc)}", file=sys.stderr)
        return EXIT_USAGE
    try:
        formatted, diagnostics = format_text(text, name)
    except FormatterBug as exc:
        print(f"plait fmt: internal error, {name} left as it is: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if formatted is None:
        _report(diagnostics, text, name)
        return EXIT_ERRORS
    changed = formatted != text
    if args.check:
        if changed:
            print(f"would reformat {name}")
        return EXIT_ERRORS if changed else EXIT_OK
    if args.diff:
        if changed:
            sys.stdout.writelines(
                difflib.unified_diff(
                    text.splitlines(keepends=True), formatted.splitlines(keepends=True), f"a/{name}", f"b/{name}"
                )
            )
        return EXIT_ERRORS if changed else EXIT_OK
    if path == STDIN:
        sys.stdout.write(formatted)
    elif changed:
        try:
            _write_atomically(Path(path), formatted)
        except OSError as exc:
            print(f"plait fmt: cannot write {name}: {_reason(exc)}", file=sys.stderr)
            return EXIT_USAGE
        print(f"reformatted {name}", file=sys.stderr)
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
