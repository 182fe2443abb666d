"""`plait explain CODE` / `plait explain --list`: a code or rule name → its documentation.

Accepts the code (`P101`, any case) or the rule's name (`undefined-name`).
An unknown code is one line on stderr and exit 2, with a suggestion when a
code or name is close.
"""

from __future__ import annotations

import argparse
import difflib
import sys

from plait.cli import EXIT_OK, EXIT_USAGE


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "code", nargs="?", metavar="CODE", help="a diagnostic code (P101) or rule name (undefined-name)"
    )
    parser.add_argument("--list", action="store_true", help="list every code with its name, severity and summary")


def run(args: argparse.Namespace) -> int:
    from plait.core.codes import CODES, lookup

    if args.list:
        width = max(len(c.name) for c in CODES.values())
        for c in CODES.values():
            print(f"{c.code}  {c.name.ljust(width)}  {str(c.severity).ljust(7)}  {c.summary}")
        return EXIT_OK
    if not args.code:
        print(
            "plait explain: give a code such as P101 or a name such as undefined-name; "
            "`plait explain --list` lists them all",
            file=sys.stderr,
        )
        return EXIT_USAGE
    entry = lookup(args.code)
    if entry is None:
        close = difflib.get_close_matches(args.code.upper(), list(CODES), n=1) or difflib.get_close_matches(
            args.code.lower(), [c.name for c in CODES.values()], n=1
        )
        hint = f" (did you mean `{close[0]}`?)" if close else ""
        print(
            f"plait explain: unknown code `{args.code}`{hint}; `plait explain --list` lists them all", file=sys.stderr
        )
        return EXIT_USAGE
    entry = CODES[entry.code]  # with its documentation, which `lookup` does not read
    print(f"{entry.code} {entry.name} ({entry.severity})\n")
    print(f"{entry.summary[0].upper()}{entry.summary[1:]}.\n")
    print(entry.explanation)
    return EXIT_OK
