"""`plait batch SPEC INPUTS.jsonl`: one run per input line → a results file in input order; resumable; exit 0/1/3/4.

The runs go through src/plait/runtime/batch.py (in this process, `--concurrency` at a
time) or src/plait/runtime/executors/ray.py (`--executor ray`: a pool of Ray actors).
Every row is a journaled run named after the batch, so running the same
command again (same spec, entry and inputs) reports the rows that finished
from the journal and resumes the rest, failed rows included (`--keep-failed`
keeps them). The inputs are read a row at a time, in memory that does not
grow with the file. Progress is a live line on stderr at
a terminal and one summary line otherwise; results go to `-o FILE` or stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import signal
import sys
import time
from pathlib import Path
from collections.abc import Callable, Iterable
from typing import IO, TYPE_CHECKING

from plait.cli import (
    EXIT_ERRORS,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_SPEC_CHANGED,
    EXIT_TERMINATED,
    EXIT_USAGE,
)
from plait.term import json_text

from .run import EXIT_FOR, fail, fit, parse_budget
from .runs import usd

if TYPE_CHECKING:  # the runtime is imported when a batch runs, not when the CLI starts
    from plait.runtime.batch import Row, RowResult
    from plait.runtime.engine import Engine

EXAMPLES = """\
Each line of INPUTS is one run's input: a JSON object for a spec with an `input` block
(text when the block has one string field), the run's text otherwise (a JSON string, or the line as it is).
Blank lines are skipped. A line that is not a valid input is that row's error; the other rows still run.

Results (stdout, or -o FILE) are JSON lines in input order, one per row:
  {"index": 0, "line": 1, "run_id": "batch-3f2a9c01d4-8b1e04c2-0", "stop_reason": "done", "output": ..., "error": null,
   "tokens": {"input_tokens": 120, "output_tokens": 31}, "cost_usd": 0.0004}
("cost_usd": USD of the row's priced model calls, null when none had a price; the summary line adds them up)
and, for a row that waits for a person, "waiting": why (a pause's reason, or the pending calls and asks), and
"pending": [{"id", "kind"}] of what it waits on (approval, ask, unknown_outcome), the ids `--decide` takes.

The first Ctrl-C starts no new rows and lets the runs in flight finish; a second one (or SIGTERM) cuts
them off. Interrupted (Ctrl-C, SIGTERM, a crash, kill -9)? Run the same command again: rows that finished are read
back from the journal (.plait/journal.db beside the spec, or --store), never run again; rows cut off, and
rows that failed (a server outage), are resumed from their journal, so no finished model or tool call repeats
(--keep-failed reports failed rows as they are). A different spec, entry or inputs file is a different batch;
so is the same one in another store, or after `plait runs rm` of its runs (run ids carry a random part the
store keeps, and idempotency keys follow the run ids). A line longer than 16 MiB is that row's error. Each row is a run: `plait runs`, `plait trace RUN_ID`, `plait resume RUN_ID`.

A row's run is pinned to the spec it started with: a run to resume under a spec edited since in ways that can
affect what is left to run is left as it is, its row "stop_reason": "spec_changed" with the changes in its error
(--accept-changes resumes it under the spec given).

--budget usd=0.50 gives each row's run its own budget, around everything it runs (as `plait run --budget`): a row
that would go over stops alone, paused for a person (raise it with `plait resume RUN_ID --budget usd=1`) or failed
with budget_exceeded (on_exceeded=fail); the other rows go on.

exit status: 0 every row done; 1 any row failed (its error is in the results); 5 a row's run was not resumed,
its spec changed; 3 a row waits for a person (approval, ask, pause; resume it with `plait resume RUN_ID`);
4 a row stopped at max_steps (1 wins over 5, 5 over 3, 3 over 4); 2 usage; 130 Ctrl-C and 143 SIGTERM
(the batch stopped; run it again to continue).

--executor ray: each actor builds its own engine from the spec and opens the journal itself. A local Ray
(no --address) can share the SQLite journal; a cluster needs --store postgresql://... (keep the password
in PGPASSWORD or ~/.pgpass on the nodes rather than in the URL: Ray records the actors' arguments).

examples:
  plait batch triage.plait tickets.jsonl -o results.jsonl
  plait batch triage.plait tickets.jsonl --concurrency 32 > results.jsonl
  plait batch triage.plait tickets.jsonl --executor ray --actors 4 -o results.jsonl
  plait batch triage.plait tickets.jsonl --executor ray --address ray://head:10001 \\
      --store postgresql://plait@db/plait -o results.jsonl"""


def register(parser: argparse.ArgumentParser) -> None:
    from plait.runtime.batch import DEFAULT_CONCURRENCY
    from plait.runtime.executors import EXECUTORS

    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EXAMPLES
    parser.add_argument("file", metavar="SPEC", help="the .plait spec whose entry runs once per input")
    parser.add_argument("inputs", metavar="INPUTS", help="a JSON-lines file, one input per line (- for stdin)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the results here (default: standard output)")
    parser.add_argument(
        "--concurrency",
        metavar="N",
        type=int,
        default=DEFAULT_CONCURRENCY,
        help=f"runs in flight at once, over all actors (default {DEFAULT_CONCURRENCY})",
    )
    parser.add_argument("--entry", metavar="NAME", help="the runnable to start from (default: main, or the only one)")
    parser.add_argument(
        "--unknown",
        choices=("pause", "retry", "skip"),
        default="pause",
        help="tool calls whose outcome is unknown (cut off mid-call), in rows cut off or paused on them: pause each "
        "row for a person (default), retry them all, or skip them all (the model is told they may not have run)",
    )
    parser.add_argument(
        "--keep-failed",
        action="store_true",
        help="on a rerun, report rows that failed as they are (default: resume them; finished calls are replayed)",
    )
    parser.add_argument(
        "--accept-changes",
        action="store_true",
        help="resume a row's run even if its spec changed since it started in ways that can affect what is left to "
        "run (default: leave it as it is and report it spec_changed, the changes listed)",
    )
    parser.add_argument(
        "--budget",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="each run's own budget (usd=0.50, tokens=N, model_calls=N, on_exceeded=pause|fail, unpriced=allow): "
        "a row that would go over pauses (or fails) alone; raise a paused one with `plait resume ID --budget`",
    )
    parser.add_argument(
        "--store",
        metavar="URL",
        help="the run journal: postgresql://... (default: SQLite in .plait/journal.db beside the spec)",
    )
    parser.add_argument(
        "--executor",
        choices=EXECUTORS,
        default=EXECUTORS[0],
        help="process: every run in this process (default); ray: a pool of Ray actors (needs plait[ray])",
    )
    parser.add_argument(
        "--actors", metavar="N", type=int, default=None, help="ray: how many actors share the runs (default 2)"
    )
    parser.add_argument(
        "--address",
        metavar="ADDR",
        help="ray: the cluster to join (e.g. ray://head:10001, or auto); default: start a local Ray instance",
    )


def run(args: argparse.Namespace) -> int:
    problem = usage_problem(args)
    if problem is not None:
        return fail(problem, EXIT_USAGE)
    try:
        inputs = _open_inputs(args.inputs)
    except OSError as exc:
        return fail(f"cannot read the inputs file `{args.inputs}`: {exc.strerror or exc}", EXIT_USAGE)
    with inputs:
        return _run(args, inputs)


def _run(args: argparse.Namespace, inputs: IO[bytes]) -> int:
    loaded = load(args)
    if isinstance(loaded, int):
        return loaded
    engine, sources = loaded
    from plait.runtime.batch import InOrder, Row, batch_id, batch_nonce, lines, planned, stream_rows
    from plait.runtime.errors import AgentError

    try:
        entry = engine.entry_of(args.entry)
    except AgentError as exc:
        return _closed(engine, fail(exc.message, EXIT_USAGE))
    try:
        digest, total = _survey(inputs)
    except OSError as exc:
        return _closed(engine, fail(f"cannot read the inputs file `{args.inputs}`: {exc.strerror or exc}", EXIT_USAGE))
    batch = batch_id([*sources, entry, digest])
    store = engine.store
    try:
        ids = (r["id"] for r in store.listing()) if store else ()  # index rows, a page at a time
        batch = f"{batch}-{batch_nonce(batch, ids)}"
    except Exception as exc:  # a store that cannot be read: nothing has run yet
        return _closed(engine, fail(f"cannot read the run journal: {exc}", EXIT_USAGE))
    rows = stream_rows(lines(inputs), engine.program.input, batch)
    items = planned(rows, store.run if store is not None else lambda _: None, args.keep_failed, args.unknown)
    try:
        out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    except OSError as exc:
        return _closed(
            engine, fail(f"cannot write the results file `{args.output}`: {exc.strerror or exc}", EXIT_USAGE)
        )
    progress = Progress(total, live=sys.stderr.isatty())
    reasons: set[str] = set()
    written = [0]

    where = _where(args)

    def write(result: RowResult) -> None:
        result = result.located(where)
        # The same JSON value, with no raw control character for a terminal to obey when stdout is one.
        out.write(json_text(json.dumps(result.to_dict(), ensure_ascii=False, default=str)) + "\n")
        out.flush()
        reasons.add(result.stop_reason)
        written[0] += 1

    ordered = InOrder(write)

    def emit(result: RowResult) -> None:
        progress.add(result)
        ordered(result)

    if args.executor == "ray":  # the driver hands rows out in chunks: known results now, the rows to run listed
        todo: list[Row] = []
        for item in items:
            if isinstance(item, Row):
                todo.append(item)
            else:
                emit(item)
        items = iter(todo)
    try:
        stopped = asyncio.run(execute(args, engine, entry, items, emit))
    except Exception as exc:  # the executor itself could not run (Ray missing or unreachable, the store down)
        progress.close()
        return fail(str(exc), EXIT_USAGE)
    finally:
        if out is not sys.stdout:
            out.close()
    progress.close()
    summary = f"{batch}: {progress.summary()}" + (f"; results in {args.output}" if args.output else "")
    if stopped is not None:
        print(
            f"plait: {stopped}: {written[0]} of {total} rows finished ({summary}); "
            "run the same command again to continue",
            file=sys.stderr,
        )
        return EXIT_TERMINATED if stopped == "terminated" else EXIT_INTERRUPTED
    print(f"plait: batch {summary}", file=sys.stderr)
    return exit_status(reasons)


def _open_inputs(name: str) -> IO[bytes]:
    """The inputs file, opened for reading; stdin is copied to a temporary file first (it is read twice)."""
    if name != "-":
        return open(name, "rb")
    import tempfile

    spool = tempfile.TemporaryFile()
    shutil.copyfileobj(sys.stdin.buffer, spool, 1 << 20)
    spool.seek(0)
    return spool


def _survey(inputs: IO[bytes]) -> tuple[str, int]:
    """(a digest of the inputs' bytes, how many rows they hold), read in chunks; the file is left at its start."""
    import hashlib

    from plait.runtime.batch import lines

    digest = hashlib.sha256()
    for chunk in iter(lambda: inputs.read(1 << 20), b""):
        digest.update(chunk)
    inputs.seek(0)
    total = sum(1 for raw in lines(inputs) if raw is None or raw.strip())
    inputs.seek(0)
    return digest.hexdigest(), total


def usage_problem(args: argparse.Namespace) -> str | None:
    if args.output and args.inputs != "-" and _same_file(args.output, args.inputs):
        return f"-o {args.output} is the inputs file: the results would overwrite the inputs"
    if args.concurrency < 1:
        return f"--concurrency wants a number of runs of at least 1, got {args.concurrency}"
    if args.executor == "ray" and args.unknown != "pause":
        return "--unknown retry|skip is for the in-process executor; with --executor ray, settle paused rows with `plait resume`"
    if args.executor != "ray" and (args.actors is not None or args.address):
        return "--actors and --address are for --executor ray"
    if args.actors is not None and args.actors < 1:
        return f"--actors wants at least 1, got {args.actors}"
    try:
        args.budget_items = parse_budget(args.budget)
    except ValueError as exc:
        return str(exc)
    if args.executor == "ray":
        from plait.runtime.executors.ray import missing

        if (problem := missing()) is not None:
            return problem
        if args.address and not (args.store or "").startswith(("postgresql://", "postgres://")):
            return (
                f"the Ray cluster at {args.address} needs a run journal every node reaches: pass "
                "--store postgresql://... (the SQLite journal is a file on this machine; it serves a local Ray only)"
            )
    return None


def _closed(engine: Engine, code: int) -> int:
    """`code`, once the engine's journal connection is closed (nothing ran: there is nothing to flush)."""
    if engine.store is not None:
        engine.store.close()
    return code


def _where(args: argparse.Namespace) -> str:
    """The options `plait resume` needs, run from here, to find this batch's runs: the store named on the command
    line (password redacted), else the spec's folder when the journal beside it is not in the current directory."""
    import shlex

    if args.store:
        from plait.runtime.store.postgres import redact

        return f"--store {shlex.quote(redact(args.store))}"
    folder = Path(args.file).parent
    if folder.resolve() == Path.cwd().resolve():
        return ""
    return f"--dir {shlex.quote(str(folder))}"


def _same_file(a: str, b: str) -> bool:
    try:
        return Path(a).resolve() == Path(b).resolve() or (Path(a).exists() and Path(a).samefile(b))
    except OSError:
        return False


def load(args: argparse.Namespace) -> tuple[Engine, list[str]] | int:
    """(engine, the spec's source texts) or an exit code after printing why there is none."""
    from .run import compile_engine

    # Each row's run is pinned to this spec, as `plait run`'s: a resume under an edited one is checked.
    loaded = compile_engine(args.file, args.store)
    if isinstance(loaded, int):
        return loaded
    engine, compiled = loaded
    # Names relative to the spec's folder: a project that moves (journal and all) is still the same batch.
    base = Path(args.file).resolve().parent
    sources = sorted(
        f"{_relative(name, base)}\x00{getattr(src, 'text', src)}" for name, src in compiled.sources.items()
    )
    return engine, sources


def _relative(name: str, base: Path) -> str:
    try:
        return str(Path(name).resolve().relative_to(base))
    except (OSError, ValueError):
        return str(name)


async def execute(
    args: argparse.Namespace,
    engine: Engine,
    entry: str,
    rows: Iterable[Row | RowResult],
    emit: Callable[[RowResult], None],
) -> str | None:
    """The rows run; None when all finished, else "interrupted" (Ctrl-C) or "terminated" (SIGTERM).

    The first Ctrl-C starts no more rows and lets the runs in flight finish; a second one, or SIGTERM,
    cancels them (each is stored as it stops, and resumed when the batch runs again).
    """
    loop = asyncio.get_running_loop()
    gentle = asyncio.Event()
    task = asyncio.ensure_future(_executor(args, engine, entry, rows, emit, gentle))
    stopped: list[str] = []

    def interrupt() -> None:
        if not stopped:
            stopped.append("interrupted")
            gentle.set()
            print(
                "\nplait: stopping: no new rows start, the runs in flight finish (Ctrl-C again to cut them off)",
                file=sys.stderr,
                flush=True,
            )
        else:
            task.cancel("Ctrl-C")  # each stored run says what stopped it

    def terminate() -> None:
        stopped[:] = ["terminated"]
        task.cancel("SIGTERM")

    for signum, handler in ((signal.SIGINT, interrupt), (signal.SIGTERM, terminate)):
        try:
            loop.add_signal_handler(signum, handler)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread
            pass
    try:
        await task
    except asyncio.CancelledError:
        if not stopped:
            raise
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.remove_signal_handler(signum)
            except (NotImplementedError, RuntimeError, ValueError):
                pass
        await engine.aclose()
    return stopped[0] if stopped else None


async def _executor(
    args: argparse.Namespace,
    engine: Engine,
    entry: str,
    rows: Iterable[Row | RowResult],
    emit: Callable[[RowResult], None],
    stop: asyncio.Event,
) -> None:
    if args.executor == "ray":
        from functools import partial

        from plait.runtime.batch import Row
        from plait.runtime.executors import ray as ray_executor

        assert engine.spec is not None  # load() names the spec file: each actor compiles it again
        make = partial(ray_executor.spec_engine, engine.spec, args.store)
        actors = args.actors or ray_executor.DEFAULT_ACTORS
        await ray_executor.run_batch(
            make,
            [r for r in rows if isinstance(r, Row)],
            emit,
            concurrency=args.concurrency,
            actors=actors,
            entry=entry,
            address=args.address,
            stop=stop,
            accept_changes=args.accept_changes,
            budget=args.budget_items,
        )
        return
    from plait.runtime.batch import run_batch

    await run_batch(
        engine,
        rows,
        emit,
        concurrency=args.concurrency,
        entry=entry,
        stop=stop,
        unknown=args.unknown,
        accept_changes=args.accept_changes,
        budget=args.budget_items,
    )


def exit_status(reasons: Iterable[str]) -> int:
    """1 if any row failed, else 5 if a row's run was not resumed (its spec changed), else 3 if any waits for a
    person, else 4 if any hit max_steps, else 0."""
    codes = {EXIT_SPEC_CHANGED if r == "spec_changed" else EXIT_FOR.get(r, EXIT_ERRORS) for r in reasons}
    for code in (EXIT_ERRORS, EXIT_SPEC_CHANGED, 3, 4):
        if code in codes:
            return code
    return EXIT_OK


class Progress:
    """Rows finished → a live line on stderr at a terminal (done/total, failed, rate, time left); silent elsewhere."""

    def __init__(self, total: int, live: bool, out: IO[str] | None = None) -> None:
        self.total = total
        self.live = live
        self.out = out or sys.stderr
        self.counts: dict[str, int] = {}
        self.stored = 0
        self.finished = 0
        #: USD of the rows' priced calls; None until a row had one.
        self.cost: float | None = None
        self.started = time.monotonic()
        self._shown = 0.0

    def add(self, result: RowResult) -> None:
        self.finished += 1
        self.stored += result.stored
        self.counts[result.stop_reason] = self.counts.get(result.stop_reason, 0) + 1
        if result.cost_usd is not None:
            self.cost = (self.cost or 0.0) + result.cost_usd
        now = time.monotonic()
        if self.live and (now - self._shown >= 0.1 or self.finished == self.total):
            self._shown = now
            print(
                f"\r\033[2K{fit(self.line(now), shutil.get_terminal_size().columns)}", end="", file=self.out, flush=True
            )

    def line(self, now: float) -> str:
        width = 24
        filled = width * self.finished // max(self.total, 1)
        ran = self.finished - self.stored
        elapsed = max(now - self.started, 1e-9)
        rate = ran / elapsed
        left = (self.total - self.finished) / rate if rate > 0 else None
        eta = f" · {_duration(left)} left" if left is not None and self.finished < self.total else ""
        failed = self.counts.get("error", 0)
        return (
            f"[{'#' * filled}{'.' * (width - filled)}] {self.finished}/{self.total}"
            + (f" · {failed} failed" if failed else "")
            + f" · {rate:.1f}/s{eta}"
        )

    def summary(self) -> str:
        parts = [f"{n} {_NAMES.get(reason, reason)}" for reason, n in sorted(self.counts.items())]
        stored = f", {self.stored} of them from an earlier run" if self.stored else ""
        rows = f"{self.total} row{'s' if self.total != 1 else ''}"
        cost = f"; cost {usd(self.cost)}" if self.cost is not None else ""
        return (f"{rows}: " + ", ".join(parts) + stored if parts else rows) + cost

    def close(self) -> None:
        if self.live:
            print("\r\033[2K", end="", file=self.out, flush=True)


#: Stop reasons as the summary line names them.
_NAMES = {
    "error": "failed",
    "interrupt": "waiting for approval",
    "pause": "paused",
    "max_steps": "at max_steps",
    "spec_changed": "not resumed (spec changed; --accept-changes)",
}


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    return (
        f"{seconds // 3600}h{seconds % 3600 // 60:02d}m" if seconds >= 3600 else f"{seconds // 60}m{seconds % 60:02d}s"
    )
