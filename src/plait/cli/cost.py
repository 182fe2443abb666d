"""`plait cost SPEC [--entry NAME] [--input-tokens N] [--format text|json]`: a spec → its worst case before it runs.

Per entry and per runnable under it: the most model calls, input and output
tokens and USD a run can spend, each runnable with the formula that gives its
calls, and every quantity plait cannot bound named (src/plait/compiler/bounds.py).
Nothing runs: like `plait check`, it reads the spec and its `plait.lock`.
Exit 0 with a bound printed (bounded or not), 1 when the spec has errors, 2
on a usage problem (an unknown entry, a bad number).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from plait.cli import EXIT_ERRORS, EXIT_OK, EXIT_USAGE, print_diagnostics

#: Levels of nesting the table indents; deeper rows stay at this indent (depth is in the JSON).
MAX_INDENT = 16


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="SPEC", help="the .plait spec")
    parser.add_argument(
        "--entry", metavar="NAME", help="the runnable a run starts at (default: `main`, else every root)"
    )
    parser.add_argument(
        "--input-tokens",
        metavar="N",
        type=_count,
        help="the most tokens the run's input holds (default: the run's input cap, 16 MiB of text)",
    )
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    parser.epilog = (
        "The bound is sound for what plait runs: a run never makes more model calls or spends more than it says. "
        "`unbounded` names what no declaration bounds (docs/cost.md)."
    )


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more: {text}")
    return value


def run(args: argparse.Namespace) -> int:
    from plait.compiler.bounds import bounds, entries_of
    from plait.compiler.pipeline import compile_spec
    from plait.term import clean

    result = compile_spec(Path(args.file))
    if result.graph is None or any(d.is_error for d in result.diagnostics):
        print_diagnostics([d for d in result.diagnostics if d.is_error], result.sources)
        return EXIT_ERRORS
    graph = result.graph
    if args.entry is not None:
        if args.entry not in graph.runnables():
            known = ", ".join(entries_of(graph)) or "none"
            print(f"plait cost: no runnable `{clean(args.entry)}` in the spec (entries: {known})", file=sys.stderr)
            return EXIT_USAGE
        entries = [args.entry]
    else:
        entries = entries_of(graph)
    found = bounds(graph, entries, args.input_tokens)
    if args.format == "json":
        from plait.term import json_text

        doc = {"version": 1, "entries": [e.to_json() for e in found]}
        sys.stdout.write(json_text(json.dumps(doc, indent=2, ensure_ascii=False)) + "\n")
        return EXIT_OK
    if not found:
        print("plait cost: the spec declares no runnable, so nothing to bound")
        return EXIT_OK
    _tables(found)
    return EXIT_OK


def _tables(found: list[Any]) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from plait.term import clean

    # Piped, rich would wrap at 80 columns: a row per line reads (and greps) better.
    console = Console(highlight=False, soft_wrap=False, width=None if sys.stdout.isatty() else 240)
    for bound in found:
        total = bound.total
        source = "the run's input cap; set --input-tokens" if bound.input_assumed else "--input-tokens"
        # Text objects, never markup: a name or a formula is shown as written, brackets and all.
        console.print(
            Text(f"entry {clean(bound.entry)}: input ≤ {bound.input_tokens:,} tokens ({source})", style="bold")
        )
        table = Table(show_edge=False, pad_edge=False)
        for column, justify in (
            ("runnable", "left"),
            ("kind", "left"),
            ("model calls", "right"),
            ("input tokens", "right"),
            ("output tokens", "right"),
            ("USD", "right"),
            ("calls formula", "left"),
        ):
            table.add_column(column, justify=justify)  # type: ignore[arg-type]
        for row in bound.rows:
            cost = row.cost
            table.add_row(
                Text("  " * min(row.depth, MAX_INDENT) + clean(row.name)),
                Text(row.kind),
                Text(cost.calls.text()),
                Text(cost.input_tokens.text()),
                Text(cost.output_tokens.text()),
                Text(cost.usd.text(usd=True)),
                Text(clean(row.formula) + (" (again: as above)" if row.again else "")),
            )
        console.print(table)
        why: list[str] = []
        for quantity in (total.calls, total.input_tokens, total.output_tokens, total.usd):
            why.extend(w for w in quantity.why if w not in why)
        if why:
            console.print(Text("unbounded by:"))
            for reason in why:
                console.print(Text(f"  - {clean(reason)}"))
        console.print()
