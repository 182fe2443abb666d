"""`plait lsp` → the language server (src/plait/ide/server.py) on stdio, imported only when the command runs.

This module parses the command's arguments and starts the server; everything
the server answers lives in the plait.ide package. `pip install -e '.[lsp]'`
(in plait's clone) is needed for this command alone.
"""

from __future__ import annotations

import argparse
import sys

from plait.cli import EXIT_OK, EXIT_USAGE


def register(parser: argparse.ArgumentParser) -> None:
    # Editors pass --stdio by convention (vscode-languageclient does); stdio is the only transport.
    parser.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (the default and only mode)")
    parser.epilog = "Needs the `lsp` extra: pip install -e '.[lsp]' in plait's clone."


def run(args: argparse.Namespace) -> int:
    try:
        from plait.ide.server import build

        server = build()
    except ImportError as exc:
        print(
            f"plait lsp: needs pygls ({exc.name}); install it with `pip install -e '.[lsp]'` in plait's clone",
            file=sys.stderr,
        )
        return EXIT_USAGE
    server.start_io()
    return EXIT_OK
