"""`plait graph FILE --json`: the compiled graph → node-link JSON on stdout, for other tools.

The schema is `docs/graph.md` ("JSON"); header values and URL query values
that look like credentials are printed as "<redacted>".
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from plait.cli import EXIT_ERRORS, EXIT_OK, print_diagnostics


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the .plait spec")
    # JSON is the only format today; the flag keeps the command line explicit and room for others.
    parser.add_argument("--json", action="store_true", default=True, help="print node-link JSON (the default)")


def run(args: argparse.Namespace) -> int:
    from plait.compiler.pipeline import compile_spec
    from plait.compiler.render import graph_json_chunks

    result = compile_spec(Path(args.file))
    if result.graph is None:
        print_diagnostics(result.diagnostics, result.sources)
        return EXIT_ERRORS
    for chunk in graph_json_chunks(result.graph):  # a node at a time: a big graph's document is gigabytes
        sys.stdout.write(chunk)
    return EXIT_OK
