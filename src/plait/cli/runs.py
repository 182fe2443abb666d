"""`plait runs [list|export|rm|prune|doctor|fork|diff]`: the project's run journal → a listing, an export, fewer runs.

Runs are kept in `.plait/journal.db` beside their spec (`--dir`, default the
current directory), or in the PostgreSQL database `--store URL` names
(default: $PLAIT_STORE, which keeps the password off the command line). `plait runs` lists them (status, entry, started, steps,
tokens; `--status` filters, `failed` meaning `error`), from index rows a page
at a time; `export ID` prints a run's rows as JSON;
`rm ID...` deletes runs; `prune --older-than 30d` deletes every stopped run
that started before then; `doctor` lists what in the journal cannot be read,
each with its file, and `doctor --repair` moves it to the quarantine folder
(copies kept); `fork ID --at STEP` starts a run from another's history
(runs_fork.py) and `diff A B` compares two runs (runs_diff.py). Damage found while opening is a warning on stderr; the other
runs list as usual. Exit 0 ok, 1 when `doctor` finds damage, 2 for a usage
error (an unknown id, no journal, a store that cannot be reached, a bad
duration).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from plait.cli import EXIT_ERRORS, EXIT_OK, EXIT_USAGE
from plait.cli.money import usd

if TYPE_CHECKING:  # the store is imported when a command opens it, not when the CLI starts
    from plait.runtime.store import Journal

T = TypeVar("T")

#: What a run's status can be in a listing; `crashed` = admitted, never stopped, and nobody holds it.
STATUSES = ("running", "crashed", "done", "until", "max_steps", "error", "cancelled", "interrupt", "pause")
#: Words people type for a status, and the status they mean (`plait runs --status failed`).
STATUS_WORDS = {"failed": "error", "fail": "error", "errored": "error", "stopped": "cancelled", "paused": "pause"}


def status_word(text: str) -> str:
    """--status's value: a status, or a word for one (STATUS_WORDS); anything else argparse refuses with the list."""
    return STATUS_WORDS.get(text.lower(), text)


def register(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "examples:  plait runs --status crashed   ·   plait runs export ID -o run.json   ·   "
        "plait runs rm ID   ·   plait runs prune --older-than 30d   ·   plait runs doctor --repair   ·   "
        "plait runs fork ID --at STEP   ·   plait runs diff A B"
    )
    add_where(parser)
    parser.add_argument(
        "--status",
        type=status_word,
        choices=STATUSES,
        help="list only runs with this status (`failed` is `error`)",
    )
    parser.add_argument("--json", action="store_true", help="print the listing as JSON lines")
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    export = actions.add_parser(
        "export",
        help="print a run as JSON: its row and every history row (Engine.restore resumes it in another journal)",
        description="Print a run as JSON (version 3): its entry, input, status and result, every history row "
        "the journal holds for it, and the spec it is pinned to (`pin`: its sources and digest), from which "
        "Engine.restore(export) resumes it in another project or store, pinned to the same spec.",
    )
    export.add_argument("id", metavar="ID", help="the run id (see `plait runs`)")
    export.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    export.add_argument(
        "--cassette",
        action="store_true",
        help="write the run's model replies as a cassette (`plait run --cassette FILE` replays it offline)",
    )
    export.add_argument(
        "--tools",
        action="store_true",
        help="with --cassette: keep the run's tool results in it too, so a replay runs no tool",
    )
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
    doctor = actions.add_parser(
        "doctor",
        help="check the journal for damage; --repair moves it aside",
        description="Check the run journal: every segment line, stored input, snapshot and history row that "
        "cannot be read, and (SQLite) the database file. Exit 0 when nothing is damaged, 1 when something is. "
        "--repair moves the damage aside, never deleting it: a damaged segment file, and a copy of each damaged "
        "value, go to the quarantine folder beside the journal; the run it belonged to stays listed and traceable "
        "and refuses to resume.",
    )
    doctor.add_argument("--repair", action="store_true", help="quarantine what is damaged (copies kept)")
    add_where(doctor)
    # argparse only: each imports what it runs when it runs
    from plait.cli.runs_diff import register as register_diff
    from plait.cli.runs_fork import register as register_fork

    register_fork(actions)
    register_diff(actions)


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
    if getattr(args, "action", None) in ("fork", "diff"):
        from importlib import import_module

        return import_module(f"plait.cli.runs_{args.action}").run(args)
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
        if action == "doctor":
            return doctor(journal, args)
        warn_damage(journal)
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


def warn_damage(journal: Journal) -> None:
    """One line per damaged segment line found while opening (the rest of the journal reads as usual)."""
    problems = journal.problems()
    for problem in problems[:10]:
        fail(f"warning: {problem}")
    if problems:
        more = f" ({len(problems) - 10} more)" if len(problems) > 10 else ""
        fail(f"warning: damage in the run journal{more}: see `plait runs doctor`, and `--repair` to move it aside")


def find_run(journal: Journal, run_id: str) -> dict[str, Any] | int:
    row = journal.run(run_id)
    if row is None:
        return fail(f"no run `{run_id}` in {journal.where} (see `plait runs`)")
    return row


def read_run(args: argparse.Namespace, run_id: str, read: Callable[[Journal, dict[str, Any]], T]) -> T | int:
    """What `read` takes from run `run_id` and its journal (opened for it, closed after), or the exit code after
    saying there is no journal or no such run."""
    journal = open_journal(args)
    if isinstance(journal, int):
        return journal
    try:
        row = find_run(journal, run_id)
        return row if isinstance(row, int) else read(journal, row)
    finally:
        journal.close()


def fail(message: str, code: int = EXIT_USAGE) -> int:
    from plait.term import clean  # a message can quote a stored row or a server's error

    print(f"plait: {clean(message)}", file=sys.stderr)
    return code


def when(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch))


def with_totals(journal: Journal, row: dict[str, Any]) -> dict[str, Any]:
    """Steps, tokens and cost of a run that never stopped, counted from its replies (a stopped run has them in its
    row)."""
    if row["status"] not in ("running", "crashed"):
        return row
    steps, tokens_in, tokens_out, cost = journal.reply_totals(row["id"])  # its replies, not its other rows
    return {**row, "steps": steps, "input_tokens": tokens_in, "output_tokens": tokens_out, "cost_usd": cost}


# -- actions ------------------------------------------------------------------------------


def listing(journal: Journal, args: argparse.Namespace) -> int:
    """From index rows, a page at a time (journal.listing): never a run's input or snapshot, never every run at once."""
    fields = ("id", "status", "entry", "started", "steps", "input_tokens", "output_tokens", "cost_usd", "spec")
    if args.json:
        for r in journal.listing(args.status):
            r = with_totals(journal, r)
            print(json.dumps({k: r.get(k) for k in fields}))
        return EXIT_OK
    # Two passes, so the columns line up without holding the table: the first measures the names.
    runs = id_width = entry_width = 0
    for r in journal.listing(args.status):
        runs, id_width, entry_width = runs + 1, max(id_width, len(r["id"])), max(entry_width, len(r["entry"]))
    if not runs:
        print(f"no runs{f' with status {args.status}' if args.status else ''} in {journal.where}", file=sys.stderr)
        return EXIT_OK
    from plait.term import clean  # an entry name or id read back from a store someone else may have written

    widths = (max(id_width, 2), max(map(len, STATUSES)), max(entry_width, 5), 19, 5, 7)
    header = ("ID", "STATUS", "ENTRY", "STARTED", "STEPS", "TOKENS", "COST")

    def show(cells: tuple[str, ...]) -> None:
        print(clean("  ".join(cell.ljust(w) for cell, w in zip(cells, (*widths, 0))).rstrip()))

    show(header)
    for r in journal.listing(args.status):
        r = with_totals(journal, r)
        show(
            (
                r["id"],
                r["status"],
                r["entry"],
                when(r["started"]),
                str(r["steps"]),
                str(r["input_tokens"] + r["output_tokens"]),
                usd(r["cost_usd"]) if r.get("cost_usd") is not None else "-",
            )
        )
    return EXIT_OK


def export(journal: Journal, args: argparse.Namespace) -> int:
    row = find_run(journal, args.id)
    if isinstance(row, int):
        return row
    if args.tools and not args.cassette:
        return fail("--tools keeps tool results in a cassette: give --cassette too")
    if args.cassette:
        from plait.runtime.cassettes.export import from_rows

        spec = Path(row["spec"]).name if row.get("spec") else None
        text = from_rows(journal.events(row["id"]), spec=spec, entry=row["entry"], tools=args.tools).dumps()
    else:
        from plait.runtime.store.export import export as exported

        snapshot = exported(journal, row)  # made from the run's rows: the journal stores a run once
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
        r["id"] for r in journal.listing() if r["started"] < cutoff and r["status"] != "running" and r["id"] not in busy
    ]
    if args.dry_run:
        for run_id in old:
            print(run_id)
        print(f"would delete {len(old)} run{'s' if len(old) != 1 else ''}", file=sys.stderr)
        return EXIT_OK
    gone = journal.delete(old) if old else 0
    print(f"deleted {gone} run{'s' if gone != 1 else ''} older than {args.older_than}", file=sys.stderr)
    return EXIT_OK


def doctor(journal: Journal, args: argparse.Namespace) -> int:
    from plait.runtime.store import doctor as checkup
    from plait.runtime.store.base import SQLJournal
    from plait.runtime.store.sqlite import QUARANTINE

    if not isinstance(journal, SQLJournal):  # every store plait opens is one; a caller's own is not checked
        return fail(f"cannot check {journal.where}: not a SQL journal")
    from plait.term import clean  # a finding can quote a damaged row: shown, never obeyed

    findings = checkup.check(journal)
    for finding in findings:
        print(clean(finding))
    if not findings:
        print(f"no damage found in {journal.where}", file=sys.stderr)
        return EXIT_OK
    if not args.repair:
        repairable = sum(f.repairable for f in findings)
        fail(
            f"{len(findings)} problem{'s' if len(findings) != 1 else ''} in {journal.where}"
            + (f"; `plait runs doctor --repair` moves {repairable} aside (copies kept)" if repairable else ""),
            EXIT_ERRORS,
        )
        return EXIT_ERRORS
    path = getattr(journal, "path", None)
    folder = path.with_name(QUARANTINE) if isinstance(path, Path) else Path("plait-quarantine")
    for line in checkup.repair(journal, findings, folder):
        print(clean(f"repaired: {line}"))
    left = [f for f in findings if not f.repairable]
    if left:
        return fail(f"{len(left)} problem{'s' if len(left) != 1 else ''} left that --repair cannot move", EXIT_ERRORS)
    return EXIT_OK
