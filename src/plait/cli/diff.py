"""`plait diff OLD NEW [--format text|json|mermaid]`: two specs → what changed in meaning between them.

Each side is a file or `git:REV:path` (read with `git show REV:path`).
Exit codes follow src/plait/cli/__init__.py's table: 0 when they mean the same, 1 when they
differ (like `diff`) or when a side has errors, `plait check`'s diagnostics
printed (a missing file is P005, as there; so is a `git:` side git cannot
show); 2 for a usage error (`git:` without a path, git not installed).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import Any

from plait.cli import EXIT_ERRORS, EXIT_OK, EXIT_USAGE, print_diagnostics
from plait.core.vocab import DIFF_FORMATS


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("old", metavar="OLD", help="a spec file, or git:REV:path")
    parser.add_argument("new", metavar="NEW", help="a spec file, or git:REV:path")
    parser.add_argument("-f", "--format", choices=DIFF_FORMATS, default="text")


class _Unusable(Exception):
    """A side that is not a usable argument (exit 2), as opposed to a spec that has errors (exit 1)."""


def _compile(side: str):
    from plait.compiler.pipeline import compile_spec

    if not side.startswith("git:"):
        return compile_spec(Path(side))
    rev, _, path = side[4:].partition(":")
    if not rev or not path:
        raise _Unusable(f"`{side}` is not git:REV:path")
    try:
        shown = subprocess.run(["git", "show", f"{rev}:{path}"], capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise _Unusable("git is not installed") from None
    if shown.returncode != 0:
        reason = (shown.stderr.strip().splitlines() or ["git show failed"])[-1]
        return _unreadable(side, f"cannot read `{side}`: {reason}")
    # Named as the path, so imports resolve beside it and spans read like the file's.
    return compile_spec(shown.stdout, path=path)


def _unreadable(side: str, message: str) -> Any:
    """A side git cannot show, as the P005 compile result a missing file gets."""
    from plait.compiler.pipeline import CompileResult
    from plait.core.codes import make
    from plait.core.source import Span

    problem = make("P005", message, Span(side, 1, 1, 1, 1, 0, 0))  # its name and severity as declared
    return CompileResult(None, [problem], {})


def run(args: argparse.Namespace) -> int:
    from plait.compiler.diff import diff_graphs, render_changes

    graphs = []
    for side in (args.old, args.new):
        try:
            result = _compile(side)
        except _Unusable as exc:
            print(f"plait diff: {exc}", file=sys.stderr)
            return EXIT_USAGE
        if not result.ok or result.graph is None:
            print_diagnostics(result.diagnostics, result.sources)
            return EXIT_ERRORS
        graphs.append(result.graph)
    changes = diff_graphs(*graphs)
    sys.stdout.write(render_changes(args.format, graphs[0], graphs[1], changes))
    return EXIT_ERRORS if changes else EXIT_OK
