"""A JSONL file of inputs and a spec's engine → one journaled run per row, many at once, results in input order.

The in-process executor: one event loop, one engine, `concurrency` workers
that each take the next row, so at most that many runs are in flight however
many rows there are. Rows are read from the file as the workers take them
(`lines`, `stream_rows`, `planned`): memory does not grow with the file, and a
line longer than MAX_INPUT_BYTES is that row's error, skipped unread. Every row
is a run with an id derived from the batch (a digest of the spec's sources,
the entry and the inputs' bytes, plus a random nonce the store keeps in its
run ids, so another checkout or a store emptied by `runs rm` runs it afresh)
and the row's position, so running the same batch again finds what the
journal already holds: a row whose run stopped is reported from the journal,
never run again, except a failed one, which is resumed (its finished calls
replayed) unless `keep_failed`; one that was cut off (killed, crashed,
cancelled by Ctrl-C or SIGTERM) is resumed from its journal, which replays
what finished (model replies, tool results) and decides what re-runs (a
non-idempotent tool call in flight pauses that run for a person). A line that
is not a valid input is that row's error; it ends neither the batch nor the
rows after it. A row's run is pinned to the spec it started with: one that
would be resumed under a spec edited in ways that can affect what is left to
run (runtime/pinning.py) is left as it is and reported `spec_changed`, the
changes in its error, unless the changes are accepted (`accept_changes`).

Executors other than this one (src/plait/runtime/executors/) run `run_row` elsewhere
and hand each result to the same `emit` (an `InOrder` writes them in order).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import secrets
from dataclasses import dataclass, field, replace
from typing import IO, TYPE_CHECKING, Any, Awaitable, Callable, Iterable, Iterator

from plait.core.defaults import MAX_INPUT_BYTES

from .errors import AgentError, error_info
from .inputs import check_input
from .outcomes import PendingEffect

if TYPE_CHECKING:
    from .engine import Engine
    from .report import RunResult

__all__ = [
    "DEFAULT_CONCURRENCY",
    "InOrder",
    "Row",
    "RowResult",
    "UNKNOWN_ACTIONS",
    "all_or_none",
    "batch_id",
    "batch_nonce",
    "lines",
    "plan",
    "planned",
    "pool",
    "read_rows",
    "run_batch",
    "run_row",
    "stream_rows",
]

DEFAULT_CONCURRENCY = 8

#: Stored statuses of a run that was cut off before it stopped: its row is resumed, not reported.
_CUT_OFF = frozenset({"running", "crashed", "cancelled"})  # cancelled: stopped by Ctrl-C or SIGTERM


@dataclass(frozen=True, slots=True)
class Row:
    """One input line: its position among the rows (from 0), its line in the file (from 1), and the input.

    `problem` says why the line is not an input the entry takes; such a row is an error and never runs.
    `resume` is set by `plan` for a row whose earlier run was cut off.
    """

    index: int
    line: int
    input: Any = None
    problem: str | None = None
    run_id: str = ""
    resume: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "line": self.line,
            "input": self.input,
            "run_id": self.run_id,
            "resume": self.resume,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Row":
        return cls(data["index"], data["line"], data["input"], None, data["run_id"], data["resume"])


@dataclass(slots=True)
class RowResult:
    """What one row's run stopped with: a line of the results file."""

    index: int
    line: int
    run_id: str | None
    stop_reason: str
    output: Any = None
    error: dict[str, Any] | None = None
    tokens: dict[str, int] = field(default_factory=lambda: {"input_tokens": 0, "output_tokens": 0})
    #: True when the row was finished before this batch started (read from the journal, not run).
    stored: bool = False
    #: For a row that waits for a person: why (a pause's reason, or the pending approvals and asks).
    waiting: str | None = None
    #: The ids and kinds of what it waits on (approvals, asks, calls of unknown outcome): `--decide ID=...` takes them.
    pending: list[dict[str, str]] = field(default_factory=list)
    #: USD of the row's priced model calls; None when none had a price.
    cost_usd: float | None = None

    @property
    def failed(self) -> bool:
        return self.stop_reason == "error"

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "line": self.line,
            "run_id": self.run_id,
            "stop_reason": self.stop_reason,
            "output": self.output,
            "error": self.error,
            "tokens": self.tokens,
            "cost_usd": self.cost_usd,
            **({"waiting": self.waiting} if self.waiting else {}),
            **({"pending": self.pending} if self.pending else {}),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RowResult":
        return cls(
            data["index"],
            data["line"],
            data["run_id"],
            data["stop_reason"],
            data.get("output"),
            data.get("error"),
            dict(data.get("tokens") or {}),
            bool(data.get("stored", False)),
            data.get("waiting"),
            list(data.get("pending") or ()),
            data.get("cost_usd"),
        )

    @classmethod
    def of_run(cls, row: Row, result: RunResult) -> "RowResult":
        report = result.report
        return cls(
            row.index,
            row.line,
            result.run_id,
            result.stop_reason,
            result.output,
            error_info(result.error) if result.error is not None else None,
            {"input_tokens": report.input_tokens, "output_tokens": report.output_tokens},
            waiting=_waiting(result.run_id, result.pause_reason, pending := [p.to_dict() for p in result.pending]),
            pending=_ids(pending),
            cost_usd=report.cost,
        )

    @classmethod
    def of_stored(cls, row: Row, stored: dict[str, Any]) -> "RowResult":
        """A finished row from its run's stored result (what `plait runs export` holds)."""
        result = stored.get("result") or {}
        usage = result.get("usage") or {}
        return cls(
            row.index,
            row.line,
            stored["id"],
            result.get("stop_reason", stored["status"]),
            result.get("output"),
            result.get("error"),
            {
                "input_tokens": usage.get("input_tokens", stored.get("input_tokens", 0)),
                "output_tokens": usage.get("output_tokens", stored.get("output_tokens", 0)),
            },
            stored=True,
            waiting=_waiting(stored["id"], result.get("pause_reason"), result.get("pending") or ()),
            pending=_ids(result.get("pending") or ()),
            cost_usd=stored.get("cost_usd"),
        )

    def located(self, where: str) -> "RowResult":
        """The same row with its resume hint made to work from where the batch ran: `where` is the options that find
        its journal there (`--dir SPEC_FOLDER`, `--store URL`); "" leaves it as it is."""
        if not where or not self.waiting or self.run_id is None:
            return self
        command = f"`plait resume {self.run_id} "
        return replace(self, waiting=self.waiting.replace(command, f"{command}{where} ", 1))

    @classmethod
    def refused(cls, row: Row, kind: str, message: str) -> "RowResult":
        return cls(row.index, row.line, None, "error", None, {"type": "AgentError", "kind": kind, "message": message})


def _ids(pending: Iterable[dict[str, Any]]) -> list[dict[str, str]]:
    return [{"id": p.get("id", "?"), "kind": p.get("kind", "approval")} for p in pending]


def _waiting(run_id: str | None, pause_reason: str | None, pending: Iterable[dict[str, Any]]) -> str | None:
    pending = list(pending)
    unknown = [p.get("id", "?") for p in pending if p.get("kind") == "unknown_outcome"]
    if unknown and len(unknown) == len(pending):
        return (
            f"the outcome of {', '.join(unknown)} is unknown (the run stopped while it ran): "
            f"`plait resume {run_id} --decide ID=retry` (or ID=skip), or run the batch again with --unknown retry|skip"
        )
    ids = [p.get("id", "?") for p in pending]
    if ids:
        return f"pending {', '.join(ids)}: answer with `plait resume {run_id} --decide ID=...` or `--answer NAME=JSON`"
    return pause_reason


# -- the batch -----------------------------------------------------------------------


def batch_id(parts: Iterable[str | bytes]) -> str:
    """`batch-` and 10 hex digits of a digest of `parts` (the spec's sources, the entry, the inputs' bytes)."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "big"))  # so ("ab", "c") and ("a", "bc") differ
        digest.update(data)
    return "batch-" + digest.hexdigest()[:10]


def batch_nonce(batch: str, stored_ids: Iterable[str]) -> str:
    """The random part of this batch's run ids in this store: the one its earlier runs carry, else a fresh one.

    So the ids (and the idempotency keys derived from them) stay the same across reruns and resumes of the batch
    in one store, and differ in another checkout or once its runs are removed (`plait runs rm`).
    """
    shape = re.compile(re.escape(batch) + r"-([0-9a-f]{8})-\d+")
    for run_id in stored_ids:
        found = shape.fullmatch(run_id)
        if found is not None:
            return found.group(1)
    return secrets.token_hex(4)


def lines(handle: IO[bytes], cap: int | None = None) -> Iterator[bytes | None]:
    """A file's lines (without the newline), read one at a time; None for a line over `cap` bytes, which is skipped
    a bounded chunk at a time, never held whole."""
    cap = MAX_INPUT_BYTES if cap is None else cap
    while True:
        line = handle.readline(cap + 2)  # a line at the cap, its newline, and one byte to tell a longer one
        if not line:
            return
        if len(line) > cap + 1 or (len(line) == cap + 1 and not line.endswith(b"\n")):
            while line and not line.endswith(b"\n"):
                line = handle.readline(1 << 16)
            yield None
            continue
        yield line.rstrip(b"\n")


def read_rows(data: bytes, schema: dict[str, Any] | None, batch: str = "") -> list[Row]:
    """Every non-blank line of a JSONL file's bytes → a Row (`stream_rows` on a list of lines)."""
    return list(stream_rows(data.split(b"\n"), schema, batch))


def stream_rows(raws: Iterable[bytes | None], schema: dict[str, Any] | None, batch: str = "") -> Iterator[Row]:
    """Non-blank lines → Rows, one at a time: the input checked against the spec's `input` block.

    With an `input` block a line is a JSON object (or, as for `plait run --input`, text when the block has one
    string field); without one, a line is the run's text: a JSON string is taken as its value, anything else as
    the line itself. A line that does not fit (None: longer than MAX_INPUT_BYTES) is a Row with a `problem`,
    never an exception.
    """
    index = 0
    for number, raw in enumerate(raws, 1):
        if raw is not None and not raw.strip():
            continue
        yield _row(index, number, raw, schema, f"{batch}-{index}" if batch else "")
        index += 1


def _row(index: int, number: int, raw: bytes | None, schema: dict[str, Any] | None, run_id: str) -> Row:
    if raw is None or len(raw) > MAX_INPUT_BYTES:
        return Row(
            index, number, None, f"line {number} is longer than the input limit of {MAX_INPUT_BYTES:,} bytes", run_id
        )
    try:
        text = raw.decode("utf-8").rstrip("\r")
    except UnicodeDecodeError as exc:
        return Row(index, number, None, f"line {number} is not UTF-8 text ({exc.reason})", run_id)
    try:
        value: Any = json.loads(text)
    except ValueError:
        value = text  # plain text; check_input says whether the `input` block takes it
    except RecursionError:
        return Row(index, number, None, f"line {number} nests too deeply to be an input", run_id)
    if schema is None:
        return Row(index, number, value if isinstance(value, str) else text, None, run_id)
    try:
        return Row(index, number, check_input(value, schema), None, run_id)
    except AgentError as exc:
        return Row(index, number, None, f"line {number}: {exc.message}", run_id)


def plan(
    rows: Iterable[Row], stored_runs: Iterable[dict[str, Any]], keep_failed: bool = False, unknown: str = "pause"
) -> tuple[list[RowResult], list[Row]]:
    """Rows and the journal's runs → (results known already, rows to run), each in input order (`planned`, listed)."""
    by_id = {r["id"]: r for r in stored_runs}
    known: list[RowResult] = []
    todo: list[Row] = []
    for item in planned(rows, by_id.get, keep_failed, unknown):
        if isinstance(item, Row):
            todo.append(item)
        else:
            known.append(item)
    return known, todo


def planned(
    rows: Iterable[Row],
    stored: Callable[[str], dict[str, Any] | None],
    keep_failed: bool = False,
    unknown: str = "pause",
) -> Iterator[Row | RowResult]:
    """Each row → its result when it is known already, else the row to run; one at a time, in input order.

    Known: bad lines, and rows whose run stopped (done, waiting for a person; failed, with `keep_failed`). To
    run: rows with no run yet, rows whose run was cut off or failed (marked `resume`: its journal replays
    what finished, so only the failed call and what follows run again), and, when `unknown` settles them
    (`--unknown retry|skip`), rows paused on calls of unknown outcome. `stored` looks one run up by id.
    """
    for row in rows:
        if row.problem is not None:
            yield RowResult.refused(row, "input_invalid", row.problem)
            continue
        found = stored(row.run_id)
        if found is None:
            yield row
        elif (
            found["status"] in _CUT_OFF
            or (found["status"] == "error" and not keep_failed)
            or (unknown != "pause" and found["status"] == "pause" and _unsettled(found))
        ):
            yield Row(row.index, row.line, row.input, None, row.run_id, resume=True)
        else:
            yield RowResult.of_stored(row, found)


def _unsettled(stored: dict[str, Any]) -> bool:
    """Whether a stored paused run waits on a call of unknown outcome (a rerun's `--unknown` answers it)."""
    pending = (stored.get("result") or {}).get("pending") or ()
    return any(p.get("kind") == "unknown_outcome" for p in pending)


#: What a resumed row does with tool calls whose outcome is unknown (cut off mid-call): pause for a person, or settle
#: them all at once (`plait batch --unknown retry|skip`).
UNKNOWN_ACTIONS = ("pause", "retry", "skip")


async def run_row(
    engine: Engine,
    row: Row,
    entry: str | None = None,
    unknown: str = "pause",
    accept_changes: bool = False,
    budget: dict[str, Any] | None = None,
) -> RowResult:
    """One row's run, started (or resumed, when `row.resume`) on `engine`; its failure is its result. A run to resume
    under a spec changed in ways that can affect what is left to run is not touched (unless `accept_changes`): its
    result says so, with its id, and the next run of the batch finds it as it was. `budget` (`plait batch --budget`)
    is each new run's own; a resumed run keeps the one it was started with (journaled with it)."""
    from . import pinning

    try:
        if row.resume:
            found = pinning.check(engine, row.run_id)
            if found is not None and found.blocked and not accept_changes:
                error = {"type": "AgentError", "kind": "spec_changed", "message": found.message()}
                return RowResult(
                    row.index, row.line, row.run_id, "spec_changed", None, error | {"changes": found.blocking}
                )
            run = engine.restore(row.run_id)
            pinning.repin(engine, run.id)
            result = await run.resume({})
            unsettled = [p.id for p in result.pending if isinstance(p, PendingEffect)]
            if unknown != "pause" and result.stop_reason == "pause" and unsettled:
                # Every call the crash left unsettled gets the one answer, as `--decide ID=ACTION` each would.
                result = await run.resume(dict.fromkeys(unsettled, unknown))
        else:
            result = await engine.start(row.input, entry=entry, run_id=row.run_id or None, budget=budget)
    except AgentError as exc:  # refused before it ran: the input, or another process holds the run
        return RowResult.refused(row, exc.kind, exc.message)
    except Exception as exc:  # the journal could not be written, or the run's own machinery failed: this row only
        return RowResult.refused(row, "run_failed", f"{type(exc).__name__}: {exc}")
    return RowResult.of_run(row, result)


async def pool(
    rows: Iterable[Row | RowResult],
    work: Callable[[Row], Awaitable[RowResult]],
    concurrency: int,
    emit: Callable[[RowResult], None],
    stop: asyncio.Event | None = None,
) -> None:
    """`work` on every row, at most `concurrency` at a time; `emit` gets each result as it finishes.

    A fixed set of workers pulls rows in order, so thousands of rows cost `concurrency` tasks, not thousands,
    and rows are read only as a worker takes one (a result known already is passed straight on).
    Once `stop` is set no row starts and the runs in flight finish (a gentle stop); cancelling the pool
    cancels the runs in flight instead (each is stored as it stops, and resumed by the next run of the batch).
    """
    rest = iter(rows)

    async def worker() -> None:
        for row in rest:
            if isinstance(row, RowResult):
                emit(row)
                continue
            if stop is not None and stop.is_set():
                return
            emit(await work(row))

    width = max(1, min(concurrency, len(rows))) if isinstance(rows, list) else max(1, concurrency)
    await all_or_none([asyncio.ensure_future(worker()) for _ in range(width)])


async def all_or_none(tasks: list[asyncio.Future[None]]) -> None:
    """Every task to its end; when one fails or the caller is cancelled, the others are cancelled and waited for.

    So an executor never returns, or raises, while a row's run is still going (a run cut off is stored as
    it stops, and the next run of the batch resumes it). Both executors wait on their tasks this way.
    """
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def run_batch(
    engine: Engine,
    rows: Iterable[Row | RowResult],
    emit: Callable[[RowResult], None],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    entry: str | None = None,
    stop: asyncio.Event | None = None,
    unknown: str = "pause",
    accept_changes: bool = False,
    budget: dict[str, Any] | None = None,
) -> None:
    """The in-process executor: every row to run, on `engine`, in this process and loop; `budget` is each run's."""
    await pool(rows, lambda row: run_row(engine, row, entry, unknown, accept_changes, budget), concurrency, emit, stop)


class InOrder:
    """Results as they finish → `write` in input order: each is passed on once every row before it has been."""

    def __init__(self, write: Callable[[RowResult], None], start: int = 0) -> None:
        self.write = write
        self.next = start
        self._waiting: dict[int, RowResult] = {}

    def __call__(self, result: RowResult) -> None:
        self._waiting[result.index] = result
        while self.next in self._waiting:
            self.write(self._waiting.pop(self.next))
            self.next += 1

    @property
    def held(self) -> int:
        """Results finished but not yet written (a row before them is still running)."""
        return len(self._waiting)
