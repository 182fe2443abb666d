"""`plait diff OLD NEW [--format text|json|mermaid]`: two specs → what changed in meaning between them.

Each side is a file or `git:REV:path` (read with `git show REV:path`).
Exit codes follow src/plait/cli/__init__.py's table: 0 when they mean the same, 1 when they
differ (like `diff`) or when a side has errors (with `--max-cost-increase PCT`: 1 only when an entry's
static cost bound rises more than PCT percent, src/plait/compiler/bounds.py), `plait check`'s diagnostics
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
    parser.add_argument(
        "--max-cost-increase",
        metavar="PCT",
        help="compare each entry's static cost bound (model calls and USD, as `plait cost`) and exit 1 only when "
        "one rises more than PCT percent (`20%%`); differences alone then exit 0",
    )


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

    limit = None
    if args.max_cost_increase is not None:
        from plait.compiler.bounds import parse_percent

        try:
            limit = parse_percent(args.max_cost_increase)
        except ValueError:
            print(f"plait diff: --max-cost-increase takes a percentage such as 20%, not `{args.max_cost_increase}`",
                  file=sys.stderr)  # fmt: skip
            return EXIT_USAGE
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
    shown = render_changes(args.format, graphs[0], graphs[1], changes)
    if limit is None:
        sys.stdout.write(shown)
        return EXIT_ERRORS if changes else EXIT_OK
    return _cost_gate(args.format, shown, graphs, limit)


def _cost_gate(format: str, shown: str, graphs: list, limit: float) -> int:
    """The diff, then how each entry's cost bound rose; exit 1 only when one rose past `limit` percent."""
    import json

    from plait.compiler.bounds import compare
    from plait.term import clean

    rises = compare(graphs[0], graphs[1], limit)
    over = [r for r in rises if r.over]
    if format == "json":
        doc = json.loads(shown)
        doc["cost"] = {"max_increase_percent": limit, "rises": [r.to_json() for r in rises], "over": bool(over)}
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(shown)
        # Mermaid's text must stay a diagram: the cost lines go to stderr there.
        out = sys.stdout if format == "text" else sys.stderr
        for rise in rises:
            mark = "over the limit" if rise.over else "within the limit"
            print(f"cost: {clean(rise.text())}: {mark}", file=out)
        verdict = f"{len(over)} over" if over else "none over"
        print(f"cost: {len(rises)} bound(s) rose, {verdict} the {limit:g}% limit", file=out)
    return EXIT_ERRORS if over else EXIT_OK
