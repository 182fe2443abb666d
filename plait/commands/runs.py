"""`plait runs [list|export|rm|prune]`: the project's run journal → a listing, an exported snapshot, or fewer runs.

Runs are kept in `.plait/journal.db` beside their spec (`--dir`, default the
current directory), or in the PostgreSQL database `--store URL` names
(default: $PLAIT_STORE, which keeps the password off the command line). `plait runs` lists them (status, entry, started, steps,
tokens; `--status` filters); `export ID` prints a run's JSON snapshot;
`rm ID...` deletes runs; `prune --older-than 30d` deletes every stopped run
that started before then. Exit 0 ok, 2 for a usage error (an unknown id, no
journal, a store that cannot be reached, a bad duration).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plait.cli import EXIT_OK, EXIT_USAGE

if TYPE_CHECKING:  # the store is imported when a command opens it, not when the CLI starts
    from plait.runtime.store import Journal

#: What a run's status can be in a listing; `crashed` = admitted, never stopped, and nobody holds it.
STATUSES = ("running", "crashed", "done", "until", "max_steps", "error", "cancelled", "interrupt", "pause")


def register(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "examples:  plait runs --status crashed   ·   plait runs export ID -o run.json   ·   "
        "plait runs rm ID   ·   plait runs prune --older-than 30d"
    )
    add_where(parser)
    parser.add_argument("--status", choices=STATUSES, help="list only runs with this status")
    parser.add_argument("--json", action="store_true", help="print the listing as JSON lines")
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    export = actions.add_parser(
        "export",
        help="print a run's JSON snapshot (the version-2 snapshot format)",
        description="Print a run's JSON snapshot: what it stopped with, its decisions and its context.",
    )
    export.add_argument("id", metavar="ID", help="the run id (see `plait runs`)")
    export.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    add_where(export)
    rm = actions.add_parser(
        "rm", help="delete runs and their history", description="Delete runs and their whole history."
    )
    rm.add_argument("ids", metavar="ID", nargs="+", help="run ids")
    add_where(rm)
    prune = actions.add_parser(
        "prune",
        help="delete stopped runs older than a duration",
        description="Delete every run that started before the cut-off and is not running now.",
    )
    prune.add_argument("--older-than", metavar="AGE", required=True, help="e.g. 30d, 12h, 90m (d, h, m, s)")
    prune.add_argument("--dry-run", action="store_true", help="list what would be deleted, delete nothing")
    add_where(prune)


def add_where(parser: argparse.ArgumentParser) -> None:
    """--dir and --store: where the runs are."""
    parser.add_argument(
        "--dir",
        metavar="DIR",
        default=argparse.SUPPRESS,
        help="the project directory whose .plait/journal.db holds the runs (default: the current directory)",
    )
    add_store(parser)


def add_store(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store",
        metavar="URL",
        default=argparse.SUPPRESS,
        help="keep runs in this PostgreSQL database (postgresql://USER@HOST[:PORT]/DB) instead of "
        ".plait/journal.db (default: $PLAIT_STORE)",
    )


def store_url(args: argparse.Namespace) -> str | None:
    """--store, else $PLAIT_STORE, else None (the SQLite journal beside the spec)."""
    return getattr(args, "store", None) or os.environ.get("PLAIT_STORE") or None


def run(args: argparse.Namespace) -> int:
    journal = open_journal(args)
    if isinstance(journal, int):
        return journal
    try:
        action = getattr(args, "action", None)
        if action == "export":
            return export(journal, args)
        if action == "rm":
            return remove(journal, args.ids)
        if action == "prune":
            return prune(journal, args)
        return listing(journal, args)
    finally:
        journal.close()


# -- shared with `plait resume` and `plait trace` -----------------------------------------


def open_journal(args: argparse.Namespace) -> Journal | int:
    """The journal `--store` or `--dir` names, or EXIT_USAGE after saying there is none or why it cannot be read."""
    from plait.runtime.store import StoreError, journal_path, open_store

    url, directory = store_url(args), getattr(args, "dir", ".")
    try:
        journal = open_store(url, directory)
        if not journal.exists():
            return fail(
                f"no run journal at {journal_path(directory)}: runs are kept beside their spec (pass --dir DIR)"
            )
        journal.open()  # connects and migrates, so a bad file, URL or server is reported here, once
    except StoreError as exc:
        return fail(str(exc))
    return journal


def find_run(journal: Journal, run_id: str) -> dict[str, Any] | int:
    row = journal.run(run_id)
    if row is None:
        return fail(f"no run `{run_id}` in {journal.where} (see `plait runs`)")
    return row


def fail(message: str, code: int = EXIT_USAGE) -> int:
    from plait.term import clean  # a message can quote a stored row or a server's error

    print(f"plait: {clean(message)}", file=sys.stderr)
    return code


def when(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch))


def with_totals(journal: Journal, row: dict[str, Any]) -> dict[str, Any]:
    """Steps and tokens of a run that never stopped, counted from its replies (a stopped run has them in its row)."""
    if row["status"] not in ("running", "crashed"):
        return row
    steps = tokens_in = tokens_out = 0
    for event in journal.events(row["id"]):
        if event["kind"] == "model_reply":
            steps += 1
            usage = event["data"].get("usage") or (0, 0)
            tokens_in, tokens_out = tokens_in + usage[0], tokens_out + usage[1]
    return {**row, "steps": steps, "input_tokens": tokens_in, "output_tokens": tokens_out}


# -- actions ------------------------------------------------------------------------------


def listing(journal: Journal, args: argparse.Namespace) -> int:
    rows = [with_totals(journal, r) for r in journal.runs()]
    if args.status:
        rows = [r for r in rows if r["status"] == args.status]
    if args.json:
        for r in rows:
            print(
                json.dumps(
                    {
                        k: r[k]
                        for k in ("id", "status", "entry", "started", "steps", "input_tokens", "output_tokens", "spec")
                    }
                )
            )
        return EXIT_OK
    if not rows:
        print(f"no runs{f' with status {args.status}' if args.status else ''} in {journal.where}", file=sys.stderr)
        return EXIT_OK
    header = ("ID", "STATUS", "ENTRY", "STARTED", "STEPS", "TOKENS")
    table = [
        (
            r["id"],
            r["status"],
            r["entry"],
            when(r["started"]),
            str(r["steps"]),
            str(r["input_tokens"] + r["output_tokens"]),
        )
        for r in rows
    ]
    widths = [max(len(h), *(len(t[i]) for t in table)) for i, h in enumerate(header)]
    from plait.term import clean  # an entry name or id read back from a store someone else may have written

    for line in (header, *table):
        print(clean("  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip()))
    return EXIT_OK


def export(journal: Journal, args: argparse.Namespace) -> int:
    row = find_run(journal, args.id)
    if isinstance(row, int):
        return row
    snapshot = row["snapshot"]
    if snapshot is None:  # never stopped: what the journal knows, without a context to continue from
        from plait.runtime.store import SNAPSHOT_VERSION

        snapshot = {
            "version": SNAPSHOT_VERSION,
            "run_id": row["id"],
            "entry": row["entry"],
            "input": row["input"],
            "result": None,
            "decisions": {},
            "status": row["status"],
        }
    text = json.dumps(snapshot, ensure_ascii=False, indent=2) + "\n"
    if args.output:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as exc:
            return fail(f"cannot write {args.output}: {exc.strerror or exc}")
    else:
        from plait.term import json_text  # the same JSON, with no raw control character for a terminal to obey

        sys.stdout.write(json_text(text))
    return EXIT_OK


def remove(journal: Journal, ids: list[str]) -> int:
    missing = [i for i in ids if journal.run(i) is None]
    if missing:
        return fail(f"no run {', '.join(f'`{i}`' for i in missing)} in {journal.where}; nothing was deleted")
    busy = journal.busy()
    live = [i for i in ids if i in busy or ((lease := journal.lease(i)) is not None and lease["live"])]
    if live:
        return fail(
            f"run {', '.join(live)} is running in another process (or still being written by it); nothing was deleted"
        )
    gone = journal.delete(ids)
    print(f"deleted {gone} run{'s' if gone != 1 else ''}", file=sys.stderr)
    return EXIT_OK


_UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1}


def parse_age(text: str) -> float:
    """`30d` → seconds; ValueError for anything else."""
    number, unit = text[:-1], text[-1:].lower()
    if unit not in _UNITS or not number.isdigit():
        raise ValueError(f"--older-than wants a number and a unit (d, h, m or s), like 30d; got `{text}`")
    return int(number) * _UNITS[unit]


def prune(journal: Journal, args: argparse.Namespace) -> int:
    try:
        cutoff = time.time() - parse_age(args.older_than)
    except ValueError as exc:
        return fail(str(exc))
    # A crashed run is kept until it is old too: it may still be resumed. A running one is never pruned.
    # Nor one another live process is still writing (its stop not yet moved into the tables): the next prune takes it.
    busy = journal.busy()
    old = [
        r["id"] for r in journal.runs() if r["started"] < cutoff and r["status"] != "running" and r["id"] not in busy
    ]
    if args.dry_run:
        for run_id in old:
            print(run_id)
        print(f"would delete {len(old)} run{'s' if len(old) != 1 else ''}", file=sys.stderr)
        return EXIT_OK
    gone = journal.delete(old) if old else 0
    print(f"deleted {gone} run{'s' if gone != 1 else ''} older than {args.older_than}", file=sys.stderr)
    return EXIT_OK
