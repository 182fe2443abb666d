"""`plait coverage SPEC`: the spec's journaled runs → graph coverage per entry, as a table, JSON, or a file to draw.

Reads every run of SPEC in its journal (`.plait/journal.db` beside it, or
`--store`/`--dir`), and reports per entry which runnables, route cases, loop
exits, map paths, asks, approval answers and fallback edges the runs reached
(src/plait/compiler/coverage.py names them). `-o FILE` writes the JSON report
that `plait render --coverage FILE` draws; `--min-coverage N` exits 7 when
fewer than N percent of the items were reached. Exit 0, 1 for a spec with
errors, 2 for a usage error (no journal, no runs of the spec), 7 below N.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from plait.cli import EXIT_COVERAGE, EXIT_ERRORS, EXIT_OK, EXIT_USAGE, print_diagnostics
from plait.term import clean, json_text


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="the .plait spec whose runs to measure")
    parser.add_argument("--entry", metavar="NAME", action="append", help="only runs of this entry (repeatable)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="also write the JSON report to FILE (`plait render --coverage FILE`)"
    )
    add_min_coverage(parser)
    from plait.cli.runs import add_where

    add_where(parser)


def add_min_coverage(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--min-coverage",
        metavar="N",
        type=percent,
        help="exit 7 when less than N percent (0-100) of the items are reached",
    )


def percent(text: str) -> float:
    try:
        value = float(text.rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a percentage: {text!r}") from None
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 100")
    return value


def run(args: argparse.Namespace) -> int:
    from plait.compiler.pipeline import compile_spec

    spec = Path(args.file)
    if not spec.is_file():
        return fail(f"no spec file {args.file}")
    result = compile_spec(spec)
    if not result.ok or result.graph is None:
        print_diagnostics(list(result.diagnostics), result.sources)
        return EXIT_ERRORS
    if not hasattr(args, "dir") and not getattr(args, "store", None):
        args.dir = str(spec.resolve().parent)  # runs are journaled beside their spec
    from plait.cli.runs import open_journal
    from plait.runtime.coverage import measure

    journal = open_journal(args)
    if isinstance(journal, int):
        return journal
    resolved = str(spec.resolve())
    try:
        rows = [r for r in journal.runs() if r.get("spec") == resolved and (not args.entry or r["entry"] in args.entry)]
        report = measure(result.graph, ((r["entry"], list(journal.events(r["id"]))) for r in rows), spec.name)
    finally:
        journal.close()
    if not rows:
        return fail(f"no runs of {args.file} in the journal: run it (or its tests) first")
    return emit(report, args)


def emit(report: Any, args: argparse.Namespace) -> int:
    """Print the report (table or JSON), write `--output`, and apply `--min-coverage`: shared with `plait test`."""
    if getattr(args, "output", None) and (problem := write(report, args.output)) is not None:
        return problem
    if getattr(args, "json", False):
        sys.stdout.write(json_text(report.dumps()))
    else:
        table(report)
    minimum = getattr(args, "min_coverage", None)
    if minimum is not None and report.percent < minimum:
        print(f"plait: coverage {report.percent:.1f}% is below --min-coverage {minimum:g}%", file=sys.stderr)
        return EXIT_COVERAGE
    return EXIT_OK


def write(report: Any, path: str) -> int | None:
    """The JSON report into `path`; an exit code after saying why it could not be written."""
    try:
        Path(path).write_text(report.dumps(), encoding="utf-8")
    except OSError as exc:
        return fail(f"cannot write {path}: {exc.strerror or exc}")
    return None


def table(report: Any, file: Any = None) -> None:
    """One rich table per entry: each item, whether a run reached it and how many did."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(file=file or sys.stdout, highlight=False, soft_wrap=False)
    for entry in report.entries:
        where = f"{report.spec} " if report.spec else ""
        title = (
            f"{where}{entry.entry}: {entry.hit}/{len(entry.items)} reached ({entry.percent:.1f}%), {entry.runs} run(s)"
        )
        grid = Table(title=Text(clean(title)), title_justify="left")
        grid.add_column("kind")
        grid.add_column("item")
        grid.add_column("runs", justify="right")
        grid.add_column("")
        for it in entry.items:
            what = f"{it.node} {it.detail}".strip()
            mark = Text("reached", style="green") if it.hit else Text("missed", style="bold red")
            # Text, not markup: a case's literal is the spec author's text, shown as written.
            grid.add_row(it.kind, Text(clean(what)), str(it.runs), mark)
        console.print(grid)
    console.print(Text(f"total: {report.percent:.1f}%"))


def fail(message: str, code: int = EXIT_USAGE) -> int:
    print(f"plait: {clean(message)}", file=sys.stderr)
    return code
