"""`plait resume ID`: a stored run → continued from its journal, exactly as `plait run SPEC --resume ID` would.

The spec is the one the run recorded (`--spec` overrides it, e.g. after the
project moved). Whatever finished is replayed, not redone: model replies and
tool results come from the journal. Tool calls whose outcome is unknown (the
run stopped while they ran) can be settled up front, one by one with
`--decide ID=retry|skip` or all at once with `--unknown retry|skip`, even on
a run that crashed and never paused on them. The run is pinned to the spec it
started with: when the spec changed since in a way that can affect what is left
to run, the resume is refused with the changes listed (exit 5) unless
`--accept-changes` (src/plait/cli/pinned.py). Exit codes are `plait run`'s (0,
1, 3, 4), and 2 when the run is unknown, its spec is gone, or another process holds it.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from plait.cli.runs import add_where, fail, read_run, store_url


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", metavar="ID", help="the run id (see `plait runs`)")
    parser.add_argument("--spec", metavar="FILE", help="the spec to resume with (default: the one the run recorded)")
    parser.add_argument(
        "--decide",
        metavar="ID=ACTION",
        action="append",
        default=[],
        help="a decision for a pending call: ID=approve, ID=reject[:message], ID=edit:{json}; "
        "for a tool call whose outcome is unknown after a crash: ID=retry or ID=skip",
    )
    parser.add_argument(
        "--answer",
        metavar="NAME=JSON",
        action="append",
        default=[],
        help="an answer for a pending ask: the ask's name (or pending id) = JSON (text for a text answer)",
    )
    parser.add_argument(
        "--unknown",
        choices=("pause", "retry", "skip"),
        default="pause",
        help="every tool call whose outcome is unknown: pause on it (default), retry them all, or skip them all",
    )
    parser.add_argument(
        "--accept-changes",
        action="store_true",
        help="go on under the spec even if it changed since the run started in ways that can affect what is left "
        "to run (else exit 5, the changes listed)",
    )
    parser.add_argument(
        "--budget",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="new limits for the budget the run stopped on (usd=5, tokens=N, model_calls=N; `none` lifts one); "
        "on a run that stopped on none, the run's own budget",
    )
    parser.add_argument("--json", action="store_true", help="print the run report as one JSON object")
    parser.add_argument("--events", action="store_true", help="print every event as a JSON line")
    add_where(parser)


def run(args: argparse.Namespace) -> int:
    from plait.cli import run as run_command

    spec = args.spec
    decide = list(args.decide)
    if spec is None or args.unknown != "pause":
        sweep = args.unknown != "pause"  # only then are the run's rows read for its unsettled tool calls
        got = read_run(args, args.id, lambda journal, row: (row, unsettled(journal, args.id) if sweep else []))
        if isinstance(got, int):
            return got
        row, open_ids = got
        decided = {d.split("=", 1)[0] for d in decide}
        decide += [f"{pid}={args.unknown}" for pid in open_ids if pid not in decided]
        if spec is None:
            spec = row["spec"]
            if not spec:
                return fail(f"run {args.id} did not record its spec file; pass --spec FILE")
            if not Path(spec).is_file():
                return fail(f"the spec of run {args.id}, {spec}, is gone; pass --spec FILE")
    parser = argparse.ArgumentParser(prog="plait run")
    run_command.register(parser)
    argv = [spec, "--resume", args.id, *(f"--decide={d}" for d in decide), *(f"--answer={a}" for a in args.answer)]
    argv += [f"--budget={b}" for b in args.budget]
    argv += ["--json"] * args.json + ["--events"] * args.events + ["--accept-changes"] * args.accept_changes
    if (url := store_url(args)) is not None:
        argv.append(f"--store={url}")
    return run_command.run(parser.parse_args(argv))


def unsettled(journal: Any, run_id: str) -> list[str]:
    """The ids of a run's tool calls whose outcome is unknown: started, never recorded as finished."""
    from plait.runtime.store import RunJournal

    return sorted(RunJournal(journal, run_id, list(journal.events(run_id))).unknown)
