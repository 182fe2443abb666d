"""A JSONL file of inputs and a spec's engine → one journaled run per row, many at once, results in input order.

The in-process executor: one event loop, one engine, `concurrency` workers
that each take the next row, so at most that many runs are in flight however
many rows there are. Every row is a run with an id derived from the batch (a
digest of the spec's sources, the entry and the inputs' bytes) and the row's
position, so running the same batch again finds what the journal already
holds: a row whose run stopped is reported from the journal, never run again;
one that was cut off (killed, crashed, cancelled by Ctrl-C or SIGTERM) is
resumed from its journal, which replays what finished (model replies, tool
results) and decides what re-runs (a non-idempotent tool call in flight
pauses that run for a person). A line that is not a valid input is that
row's error; it ends neither the batch nor the rows after it.

Executors other than this one (runtime/executors/) run `run_row` elsewhere
and hand each result to the same `emit` (an `InOrder` writes them in order).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Iterable

from .errors import AgentError, error_info
from .inputs import check_input

if TYPE_CHECKING:
    from .engine import Engine
    from .report import RunResult

__all__ = [
    "DEFAULT_CONCURRENCY",
    "InOrder",
    "Row",
    "RowResult",
    "all_or_none",
    "batch_id",
    "plan",
    "pool",
    "read_rows",
    "run_batch",
    "run_row",
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
            **({"waiting": self.waiting} if self.waiting else {}),
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
            waiting=_waiting(result.run_id, result.pause_reason, [p.to_dict() for p in result.pending]),
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


def _waiting(run_id: str | None, pause_reason: str | None, pending: Iterable[dict[str, Any]]) -> str | None:
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


def read_rows(data: bytes, schema: dict[str, Any] | None, batch: str = "") -> list[Row]:
    """Every non-blank line of a JSONL file → a Row: the input checked against the spec's `input` block.

    With an `input` block a line is a JSON object (or, as for `plait run --input`, text when the block has one
    string field); without one, a line is the run's text: a JSON string is taken as its value, anything else as
    the line itself. A line that does not fit is a Row with a `problem`, never an exception.
    """
    rows: list[Row] = []
    for number, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        index = len(rows)
        run_id = f"{batch}-{index}" if batch else ""
        try:
            text = raw.decode("utf-8").rstrip("\r")
        except UnicodeDecodeError as exc:
            rows.append(Row(index, number, None, f"line {number} is not UTF-8 text ({exc.reason})", run_id))
            continue
        try:
            value: Any = json.loads(text)
        except ValueError:
            value = text  # plain text; check_input says whether the `input` block takes it
        if schema is None:
            rows.append(Row(index, number, value if isinstance(value, str) else text, None, run_id))
            continue
        try:
            rows.append(Row(index, number, check_input(value, schema), None, run_id))
        except AgentError as exc:
            rows.append(Row(index, number, None, f"line {number}: {exc.message}", run_id))
    return rows


def plan(rows: list[Row], stored_runs: Iterable[dict[str, Any]]) -> tuple[list[RowResult], list[Row]]:
    """Rows and the journal's runs → (results known already, rows to run), each in input order.

    Known: bad lines, and rows whose run stopped (done, failed, waiting for a person). To run: rows with no
    run yet, and rows whose run was cut off (marked `resume`).
    """
    by_id = {r["id"]: r for r in stored_runs}
    known: list[RowResult] = []
    todo: list[Row] = []
    for row in rows:
        if row.problem is not None:
            known.append(RowResult.refused(row, "input_invalid", row.problem))
            continue
        stored = by_id.get(row.run_id)
        if stored is None:
            todo.append(row)
        elif stored["status"] in _CUT_OFF:
            todo.append(Row(row.index, row.line, row.input, None, row.run_id, resume=True))
        else:
            known.append(RowResult.of_stored(row, stored))
    return known, todo


async def run_row(engine: Engine, row: Row, entry: str | None = None) -> RowResult:
    """One row's run, started (or resumed, when `row.resume`) on `engine`; its failure is its result."""
    try:
        if row.resume:
            run = engine.restore(row.run_id)
            result = await run.resume({})
        else:
            result = await engine.start(row.input, entry=entry, run_id=row.run_id or None)
    except AgentError as exc:  # refused before it ran: the input, or another process holds the run
        return RowResult.refused(row, exc.kind, exc.message)
    except Exception as exc:  # the journal could not be written, or the run's own machinery failed: this row only
        return RowResult.refused(row, "run_failed", f"{type(exc).__name__}: {exc}")
    return RowResult.of_run(row, result)


async def pool(
    rows: list[Row],
    work: Callable[[Row], Awaitable[RowResult]],
    concurrency: int,
    emit: Callable[[RowResult], None],
    stop: asyncio.Event | None = None,
) -> None:
    """`work` on every row, at most `concurrency` at a time; `emit` gets each result as it finishes.

    A fixed set of workers pulls rows in order, so thousands of rows cost `concurrency` tasks, not thousands.
    Once `stop` is set no row starts and the runs in flight finish (a gentle stop); cancelling the pool
    cancels the runs in flight instead (each is stored as it stops, and resumed by the next run of the batch).
    """
    rest = iter(rows)

    async def worker() -> None:
        for row in rest:
            if stop is not None and stop.is_set():
                return
            emit(await work(row))

    await all_or_none([asyncio.ensure_future(worker()) for _ in range(max(1, min(concurrency, len(rows))))])


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
    rows: list[Row],
    emit: Callable[[RowResult], None],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    entry: str | None = None,
    stop: asyncio.Event | None = None,
) -> None:
    """The in-process executor: every row to run, on `engine`, in this process and loop."""
    await pool(rows, lambda row: run_row(engine, row, entry), concurrency, emit, stop)


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
