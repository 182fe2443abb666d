"""The `plait` command line: argv → one subcommand → exit code.

Exit codes: EXIT_CODES below is the one table. Every subcommand returns one of
these, and every `--help` prints the table.

Each subcommand lives in `src/plait/cli/<name>.py` with `register(subparsers)`
and `run(args) -> int`; only the chosen one is imported, so `plait check` never
loads the runtime or the HTTP stack.
"""

from __future__ import annotations

import argparse
import sys
from importlib import import_module
from typing import NoReturn

EXIT_OK = 0
EXIT_ERRORS = 1
EXIT_USAGE = 2
EXIT_HUMAN = 3
EXIT_MAX_STEPS = 4
EXIT_SPEC_CHANGED = 5
EXIT_BUDGET = 6
EXIT_COVERAGE = 7
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143

#: The exit-code table, the same for every command (README, docs and `--help` all show this).
EXIT_CODES: dict[int, str] = {
    EXIT_OK: "success: no errors (warnings allowed unless --strict), nothing to reformat, no differences, run done",
    EXIT_ERRORS: "errors in a spec (a file that cannot be read is one: P005), a failed run, a failed test, "
    "a file `fmt --check` would change, specs `diff` finds different, damage `runs doctor` finds",
    EXIT_USAGE: "usage error (bad option, no specs under a folder, no tests found), a run store that cannot be opened (said before "
    "a run does anything), or an internal failure",
    EXIT_HUMAN: "the run stopped for a human: an approval, an ask or a pause (resume it)",
    EXIT_MAX_STEPS: "the run stopped at max_steps",
    EXIT_SPEC_CHANGED: "resume or fork refused: the spec changed since the run started in a way that can affect what "
    "is left to run (the changes are listed; --accept-changes goes on)",
    EXIT_BUDGET: "the run stopped at a budget whose `on_exceeded` is `fail` (error kind budget_exceeded)",
    EXIT_COVERAGE: "graph coverage below --min-coverage N (`plait runs coverage`, `plait test --coverage`)",
    EXIT_INTERRUPTED: "interrupted by Ctrl-C (the shell's convention, 128 + SIGINT)",
    EXIT_TERMINATED: "terminated by SIGTERM (128 + 15); a run is stored first, so `plait resume` continues it",
}


def exit_code_table() -> str:
    """EXIT_CODES as the `--help` epilog block."""
    import textwrap

    rows = (
        textwrap.fill(text, 96, initial_indent=f"  {code:<3} ", subsequent_indent=" " * 6)
        for code, text in EXIT_CODES.items()
    )
    return "exit status (every command):\n" + "\n".join(rows)


#: name -> one-line help; the module is plait.cli.<name with - as _>.
COMMANDS: dict[str, str] = {
    "check": "compile specs and report every problem found",
    "fmt": "rewrite specs in the canonical layout",
    "explain": "print the documentation of a diagnostic code",
    "render": "draw the compiled graph (svg, png, pdf, dot, mermaid, json, html)",
    "graph": "print the compiled graph as JSON",
    "diff": "semantic diff of two specs",
    "cost": "the most model calls, tokens and USD a run of a spec can spend, with the formulas (nothing runs)",
    "run": "execute a spec",
    "test": "run the `test` blocks of specs: offline, in parallel, a report of what failed and where",
    "resume": "continue a stored run from its journal (nothing that finished runs again)",
    "runs": "list, export, delete and prune the stored runs of a project",
    "trace": "the timeline of a stored run: model calls, tool calls, decisions",
    "coverage": "graph coverage of a spec's runs: the route cases, loop exits, asks... they reached",
    "batch": "run a spec once per line of a JSON-lines file, results in input order (resumable)",
    "chat": "talk to one agent of a spec, keeping history",
    "mcp": "MCP: `plait mcp lock` writes the tools each declared server offers to plait.lock; "
    "`plait mcp serve SPEC` serves a spec's entries as MCP tools over stdio",
    "models": "`plait models lock` writes the price, limits and capabilities of the models specs use to plait.lock",
    "fake-server": "serve scripted replies in the providers' wire formats on loopback",
    "completion": "print a shell completion script (bash, zsh or fish)",
    "lsp": "the language server on stdio: diagnostics, hover, definition, references, completion, rename, formatting",
    "serve": "serve specs over HTTP: runs, live events, decisions, OpenAPI, the studio (durable, journaled)",
}


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose usage errors quote an unknown argument as text made safe to show: argv may come
    from a script's untrusted input, and `unrecognized arguments: ...` printed it raw. Subparsers share the class."""

    def error(self, message: str) -> NoReturn:
        from plait.term import clean

        super().error(clean(message))


def _parser(chosen: str | None, helping: bool = True) -> tuple[argparse.ArgumentParser, argparse.ArgumentParser | None]:
    """The top-level parser, and the chosen command's (None when no command is named).

    Unless help is asked for (`helping`), a named command's parser is the only one built and no epilog is
    written: nothing shows them, and making them was a few ms of every `plait check`."""
    chosen_parser = None
    parser = _Parser(
        prog="plait",
        description="plait: a declarative language for LLM agents. Check, render and run .plait specs.",
        epilog="Run `plait COMMAND --help` for a command's options.\n\n" + exit_code_table() if helping else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-V", "--version", action="version", version=f"plait {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, summary in COMMANDS.items():
        if name == chosen:
            module = import_module(f"plait.cli.{name.replace('-', '_')}")
            command = sub.add_parser(name, help=summary, description=summary)
            module.register(command)
            if helping:
                _epilog(command)
            chosen_parser = command
        elif helping or chosen is None:
            sub.add_parser(name, help=summary, add_help=False)
    return parser, chosen_parser


def _epilog(command: argparse.ArgumentParser) -> None:
    """The command's own note (if any), then the one table; raw, so the table keeps its lines."""
    import textwrap

    raw = command.formatter_class is argparse.RawDescriptionHelpFormatter
    own = command.epilog if raw or not command.epilog else textwrap.fill(command.epilog)
    command.epilog = (f"{own}\n\n" if own else "") + exit_code_table()
    command.formatter_class = argparse.RawDescriptionHelpFormatter


def print_diagnostics(diagnostics: list, sources: dict, **options) -> None:
    """A failed compile's diagnostics on stderr, in `plait check`'s text report (`options` go to its emitter)."""
    from plait.compiler.report import render, wants_color

    sys.stderr.write(render(diagnostics, sources, "text", color=wants_color(sys.stderr), **options))


def _version() -> str:
    from plait import __version__

    return __version__


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    chosen = next((a for a in argv if not a.startswith("-")), None)
    helping = not argv or "-h" in argv or "--help" in argv
    parser, command = _parser(chosen if chosen in COMMANDS else None, helping)
    args, extra = parser.parse_known_args(argv)
    if extra:  # `plait check --bogus`: the command's usage, not the top level's (exit 2 either way)
        (command or parser).error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    module = import_module(f"plait.cli.{args.command.replace('-', '_')}")
    try:
        return module.run(args)
    except KeyboardInterrupt:
        print("plait: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # the last line of defence: one line, never a traceback
        from plait.term import clean  # an error's text can quote a server or a file: shown, never obeyed

        print(f"plait: internal error: {type(exc).__name__}: {clean(exc)}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
