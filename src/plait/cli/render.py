"""`plait render FILE [-o OUT] [--format ...]`: the compiled graph → a picture or its source.

No `-o` writes DOT to stdout. The format follows `-o`'s extension unless
`--format` names one. A spec with errors renders nothing (exit 1); a bad
option is one line (exit 2). Without Graphviz, svg/png/pdf write nothing and
html writes the page without its picture, saying so; both exit 2 with one line
on stderr. Render reads the graph only: user code is never
imported.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from plait.cli import EXIT_ERRORS, EXIT_OK, EXIT_USAGE, print_diagnostics

from plait.core.vocab import RENDER_DIRECTIONS as DIRECTIONS
from plait.core.vocab import RENDER_FORMATS as FORMATS

_EXTENSIONS = {
    ".svg": "svg",
    ".png": "png",
    ".pdf": "pdf",
    ".dot": "dot",
    ".gv": "dot",
    ".mmd": "mermaid",
    ".mermaid": "mermaid",
    ".json": "json",
    ".html": "html",
    ".htm": "html",
}


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the .plait spec")
    parser.add_argument("-o", "--output", metavar="OUT", help="write here (default: stdout)")
    parser.add_argument(
        "-f", "--format", choices=FORMATS, help="output format (default: from OUT's extension, else dot)"
    )
    parser.add_argument("--entry", metavar="NAME", help="draw only what running this runnable can reach")
    parser.add_argument(
        "--coverage",
        metavar="FILE",
        help="mark what no run reached, from a coverage report (`plait coverage SPEC -o FILE`, `plait test --coverage`)",
    )
    parser.add_argument(
        "--cost",
        action="store_true",
        help="write each runnable's worst case (most model calls and USD per run, as `plait cost`) in its label",
    )
    parser.add_argument(
        "--expand",
        metavar="AGENT",
        nargs="+",
        action="extend",
        default=[],
        help="draw these agents' turns as the step pipeline",
    )
    parser.add_argument(
        "--direction",
        choices=DIRECTIONS,
        default="auto",
        help="layout direction: left to right, top to bottom, or (default) auto, whichever fits a screen better",
    )
    parser.add_argument(
        "--hide",
        metavar="KINDS",
        default=None,
        help="fold these into the labels of what uses them: models,tools (the default); `none` draws them as nodes",
    )


def _coverage(path: str | None) -> object:
    """--coverage FILE: the report (compiler/coverage.py; the runtime is never imported), or a one-line error."""
    if path is None:
        return None
    from plait.compiler.coverage import Report

    return Report.load(path)


def _format(args: argparse.Namespace) -> str:
    if args.format:
        return args.format
    if args.output:
        suffix = Path(args.output).suffix.lower()
        if suffix not in _EXTENSIONS:
            raise ValueError(f"cannot tell the format from `{args.output}`; pass --format ({', '.join(FORMATS)})")
        return _EXTENSIONS[suffix]
    return "dot"


def run(args: argparse.Namespace) -> int:
    from plait.compiler.pipeline import compile_spec
    from plait.compiler.render import IMAGE_FORMATS, RenderError, RenderOptions, render

    try:
        fmt = _format(args)
    except ValueError as exc:
        print(f"plait render: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if fmt in IMAGE_FORMATS and not args.output and sys.stdout.isatty():
        print(f"plait render: {fmt} is binary; pass -o FILE or redirect stdout", file=sys.stderr)
        return EXIT_USAGE
    result = compile_spec(Path(args.file))
    if result.graph is None:
        print_diagnostics(result.diagnostics, result.sources)
        return EXIT_ERRORS
    hide = None if args.hide is None else tuple(w.strip() for w in args.hide.split(",") if w.strip())
    from plait.compiler.coverage import CoverageError

    try:
        coverage = _coverage(args.coverage)
    except CoverageError as exc:
        print(f"plait render: {exc}", file=sys.stderr)
        return EXIT_USAGE
    cost = None
    if args.cost:
        from plait.compiler.bounds import bounds, entries_of

        known = result.graph.runnables()
        cost = bounds(result.graph, [args.entry] if args.entry in known else entries_of(result.graph))
    options = RenderOptions(args.entry, tuple(args.expand), args.direction, hide, coverage, cost)
    try:
        out = render(result.graph, fmt, options, result.sources)
    except RenderError as exc:
        # An HTML page without Graphviz is still worth having (source, names); it says what it lacks.
        partial = getattr(exc, "partial", None)
        if partial is not None:
            try:
                _write(partial, args.output)
            except OSError:
                pass
        print(f"plait render: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        _write(out, args.output)
    except OSError as exc:
        print(f"plait render: cannot write `{args.output}`: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK


def _write(out: str | bytes, path: str | None) -> None:
    data = out.encode("utf-8") if isinstance(out, str) else out
    if path is None:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    Path(path).write_bytes(data)
