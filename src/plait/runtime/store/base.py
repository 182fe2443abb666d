"""Journal rows → a SQL database, whichever backend holds it: the interface the runtime uses, and what backends share.

`Journal` is the interface: what lifecycle.py, the effects ledger (through
RunJournal), the `plait runs/trace/resume` commands and batch executors call.
`SQLJournal` implements it over a DB-API connection and a dialect (dialect.py):
rows and table statements are buffered, `durable()` makes every row buffered
so far durable with one write for all the runs waiting in the same loop
iteration (group commit), and admissions, leases, stops and reads are the same
SQL everywhere. A backend says how to connect, how to open a transaction that
other processes cannot interleave with, and how rows become durable before the
next side effect (SQLite: its segment file; PostgreSQL: a commit).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import time
import uuid
from typing import Any, Iterator, Protocol

import orjson

from ..secret_values import known, mask_json
from plait.core.defaults import MAX_INPUT_BYTES

from . import dialect as q
from .dialect import Dialect

__all__ = [
    "LEASE_SECONDS",
    "Journal",
    "JournalWriteError",
    "LeaseHeld",
    "SQLJournal",
    "StoreError",
    "encode",
    "input_too_large",
    "storable",
]

#: How long a lease lasts without renewal; a live holder renews it every third of that.
LEASE_SECONDS = 30.0
#: The standard library's encoder, for what orjson refuses (an int beyond 64 bits, a lone surrogate); one for every
#: call. ASCII out: a lone surrogate (a non-UTF-8 file name a tool listed, `--input` bytes argv decoded with
#: surrogateescape, a model's "\ud800") has no UTF-8 form, but its `\udXXX` escape is JSON that any
#: reader turns back into the same string.
_json_encode = json.JSONEncoder(ensure_ascii=True, default=str, separators=(",", ":")).encode
#: What the standard encoder (default=str) did, kept: non-string keys become strings, and dataclasses and
#: datetimes go through `str` rather than orjson's own forms.
_ORJSON = orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME


def encode(value: Any) -> str:
    """A row's value → compact JSON text that is valid UTF-8, whatever strings it holds. orjson: about ten times the
    standard encoder's speed on rows like these, and every row, admission and stop of a journaled run is encoded
    (the journal's largest per-row cost)."""
    try:
        text = orjson.dumps(value, default=str, option=_ORJSON).decode()
    except TypeError:  # orjson.JSONEncodeError is one
        text = _json_encode(value)
    return mask_json(text) if known() else text  # no secret the run resolved is ever written down


def input_too_large(value: Any) -> bool:
    """Whether the input's JSON is over core.defaults.MAX_INPUT_BYTES: it is stored in the run's row and in every
    snapshot of it, and handed to every step (text is not copied when its length alone decides)."""
    if isinstance(value, str):
        if len(value) * 6 <= MAX_INPUT_BYTES:  # a character is at most six bytes of JSON (a `\uXXXX` escape)
            return False
        if len(value) > MAX_INPUT_BYTES:
            return True
    return len(encode(value).encode()) > MAX_INPUT_BYTES


def storable(text: str) -> str:
    """A string for a text column (a row's key, a spec path): itself when it has a UTF-8 form and no NUL; else its
    lone surrogates as `\\udXXX` and its NULs as `\\x00` (PostgreSQL's text holds no NUL: a model's call id with one
    failed the write), the same every time, so a key computed again on resume finds its row."""
    try:
        text.encode()
    except UnicodeEncodeError:
        text = text.encode("utf-8", "backslashreplace").decode()
    return text.replace("\x00", "\\x00") if "\x00" in text else text


class StoreError(Exception):
    """The store cannot be opened (a bad URL, a server that is down, refused credentials): one line, no password."""


class JournalWriteError(Exception):
    """A commit failed (disk full, read-only file system, server gone): the run stops rather than act unrecorded."""


class LeaseHeld(Exception):
    """Another live process owns the run."""

    def __init__(self, run_id: str, host: str, pid: int) -> None:
        self.run_id, self.host, self.pid = run_id, host, pid
        super().__init__(
            f"run {run_id} is being run by another process (pid {pid} on {host}); wait for it to stop, then resume"
        )


class Journal(Protocol):
    """A run store: one per process and location, shared by every run the process makes."""

    owner: str

    @property
    def where(self) -> str:
        """Where the runs are, for messages: a file path, or a URL without its password."""
        ...

    def open(self) -> None:
        """Connect (and migrate) now; StoreError when that fails."""
        ...

    def exists(self) -> bool: ...
    def close(self) -> None: ...
    def event(self, run_id: str, seq: int, kind: str, key: str | None, data: Any) -> None: ...
    async def durable(self) -> None: ...
    def flush(self) -> None: ...
    def settle(self) -> None: ...
    def admit(self, run_id: str, entry: str, spec: str | None, input: Any) -> None: ...
    def acquire(self, run_id: str) -> None: ...
    def pin(self, run_id: str, digest: str, source: str) -> None:
        """Buffer the run's spec: its sources (kept once per digest) and the digest on the run's row."""
        ...

    def pinned(self, run_id: str) -> tuple[str, str | None] | None:
        """(digest, sources) the run was pinned to (sources None if they were never stored); None: not pinned."""
        ...

    def stopped(
        self,
        run_id: str,
        status: str,
        result: dict[str, Any],
        steps: int,
        tokens: tuple[int, int],
        cost: float | None = None,
    ) -> None: ...
    def import_run(
        self, run_id: str, entry: str, spec: str | None, input: Any, result: Any, rows: list[dict[str, Any]]
    ) -> None:
        """A run from elsewhere (an export's rows, a snapshot as its `base` row) into the journal, unleased."""
        ...

    def run(self, run_id: str) -> dict[str, Any] | None: ...
    def runs(self, status: str | None = None) -> list[dict[str, Any]]: ...
    def listing(self, status: str | None = None, page: int = 500) -> Iterator[dict[str, Any]]: ...
    def events(self, run_id: str) -> Iterator[dict[str, Any]]: ...
    def reply_totals(self, run_id: str) -> tuple[int, int, int, float | None]:
        """(model calls, input tokens, output tokens, USD or None when no call had a price) from the run's model
        replies alone: a listing's figures for a run that has no stopped row, without reading its other rows."""
        ...

    def problems(self) -> list[str]:
        """Damage found while opening and reading (a segment line that is not a row), one line each, with its file."""
        ...

    def damaged(self, run_id: str) -> list[str]:
        """Damage that may have cost this run a row (a line naming it, or naming no run in a file that holds it)."""
        ...

    def lease(self, run_id: str) -> dict[str, Any] | None: ...
    def busy(self) -> set[str]:
        """Runs another live process may still write to the tables (stopped or not): not to be deleted now."""
        ...

    def delete(self, run_ids: list[str]) -> int:
        """Delete these runs and their history, except `busy()` ones; how many were deleted."""
        ...


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class SQLJournal:
    """What SQLite and PostgreSQL journals share; a backend fills in the hooks under "backend"."""

    dialect: Dialect

    def __init__(self) -> None:
        self.host = socket.gethostname()
        self.pid = os.getpid()
        self.token = uuid.uuid4().hex[:8]
        self.owner = f"{self.host}:{self.pid}:{self.token}"
        self._conn: Any = None
        #: Rows not yet in the tables: (run_id, seq, kind, key, at, data as JSON text).
        self._rows: list[tuple[Any, ...]] = []
        #: Statements for the tables (admissions, stops, leases), run first at the next flush.
        self._sql: list[tuple[str, tuple[Any, ...]]] = []
        #: The loop a group write is scheduled on, and a future per run waiting for it (its own: one waiter being
        #: cancelled cancels only its future, never the write the others wait for; cheaper than a shield each).
        self._waiting: tuple[asyncio.AbstractEventLoop, list[asyncio.Future[None]]] | None = None
        self._held: set[str] = set()
        #: Runs of this process admitted or resumed and not yet stopped.
        self._active = 0
        self._renewal: asyncio.TimerHandle | None = None
        #: A write failed and the run waiting on it was told (it stopped): close need not say it again.
        self._failed = False
        #: Spec digests whose sources this journal has written: a spec's text goes in once, not once per run.
        self._specs: set[str] = set()

    # -- backend ---------------------------------------------------------------------

    @property
    def where(self) -> str:
        raise NotImplementedError

    def _connect(self) -> Any:
        """A new connection, its schema migrated."""
        raise NotImplementedError

    def _transaction(self, conn: Any, exclusive: bool = False) -> contextlib.AbstractContextManager[Any]:
        """One transaction; `exclusive`: no other process writes until it ends (SQLite) or locks are taken in it."""
        raise NotImplementedError

    def _lock_run(self, conn: Any, run_id: str) -> None:
        """Inside acquire's transaction: make a second acquirer of the same run wait for this one."""

    def _write(self) -> None:
        """Every buffered row durable, in one write: the heart of `durable()`."""
        raise NotImplementedError

    def _close(self) -> None:
        """What the backend holds besides the connection."""

    def sync(self) -> None:
        """Before a read: everything written anywhere is in the tables."""
        self.flush()

    # -- connection ------------------------------------------------------------------

    @property
    def conn(self) -> Any:
        conn = self._conn
        if conn is None:
            conn = self._conn = self._connect()
            self._opened()
        return conn

    def _opened(self) -> None:
        """Right after the first connection (SQLite: take in what other processes left)."""

    def open(self) -> None:
        self.conn  # noqa: B018 - connects and migrates; a backend raises StoreError with a one-line reason

    def exists(self) -> bool:
        return True

    def close(self) -> None:
        try:
            self.flush()
        except Exception as exc:
            if not self._failed:  # nobody has heard of it yet
                raise self._write_failed(exc) from None
        finally:
            if self._renewal is not None:
                self._renewal.cancel()
                self._renewal = None
            self._close()
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # -- writing ---------------------------------------------------------------------

    def event(self, run_id: str, seq: int, kind: str, key: str | None, data: Any) -> None:
        """Buffer one history row (durable after the next `durable()` or `flush()`)."""
        self._rows.append((run_id, seq, kind, None if key is None else storable(key), time.time(), encode(data)))

    def later(self, sql: str, params: tuple[Any, ...]) -> None:
        self._sql.append((sql, params))

    def _pending(self) -> bool:
        return bool(self._rows or self._sql)

    async def durable(self) -> None:
        """Until every row buffered so far is durable: one write (or commit) for all the runs waiting now."""
        if not self._pending():
            return
        if self._active <= 1 and self._waiting is None:  # alone: nobody to share a write with
            self._write_now()
            return
        loop = asyncio.get_running_loop()
        waiting = self._waiting
        if waiting is not None and waiting[0] is not loop:  # left over from a loop that ended
            self._write_now()
            waiting = None
            if not self._pending():
                return
        if waiting is None:
            waiting = self._waiting = (loop, [])
            loop.call_soon(self._write_group)
        future = loop.create_future()
        waiting[1].append(future)
        await future

    def _write_failed(self, exc: Exception) -> JournalWriteError:
        self._failed = True
        return JournalWriteError(f"the run journal {self.where} could not be written: {one_line(exc)}")

    def _write_now(self) -> None:
        try:
            self._write()
        except Exception as exc:
            raise self._write_failed(exc) from exc

    def _write_group(self) -> None:
        waiting, self._waiting = self._waiting, None
        futures = waiting[1] if waiting is not None else []
        try:
            self._write()
        except Exception as exc:
            failed = self._write_failed(exc)
            for future in futures:
                if not future.done():  # a waiter cancelled meanwhile has nothing to hear
                    future.set_exception(failed)
            return
        for future in futures:
            if not future.done():
                future.set_result(None)

    def flush(self) -> None:
        """Everything buffered into the tables, now, in one transaction (kept buffered if it fails)."""
        if not self._sql and not self._rows:
            return
        sql, self._sql = self._sql, []
        rows, self._rows = self._rows, []
        try:
            conn = self.conn
            with self._transaction(conn):
                for statement, params in _phased(sql):  # admissions first: a run's row comes before its history
                    conn.cursor().executemany(self.dialect.sql(statement), params)
                if rows:
                    self._insert_events(conn, rows)
        except BaseException:
            self._sql[:0], self._rows[:0] = sql, rows
            raise
        self._flushed()

    def _insert_events(self, conn: Any, rows: list[tuple[Any, ...]]) -> None:
        if self.dialect.columnar:
            conn.execute(self.dialect.insert_event, [list(column) for column in zip(*rows)])
        else:
            conn.cursor().executemany(self.dialect.insert_event, rows)

    def _flushed(self) -> None:
        """After a flush committed (SQLite: the segment starts again)."""

    def settle(self) -> None:
        """After a stop: the stop's rows and the run's row are durable before the caller hears of it."""
        self.flush()

    # -- runs and leases -------------------------------------------------------------

    def admit(self, run_id: str, entry: str, spec: str | None, input: Any) -> None:
        """Buffer a new run's row and its lease (the caller awaits `durable()` before the first step)."""
        now = time.time()
        self.later(q.INSERT_RUN, (run_id, entry, None if spec is None else storable(spec), encode(input), now, now))
        self.later(q.ADMIT_LEASE, (run_id, self.owner, self.pid, self.host, now + LEASE_SECONDS))
        self._active += 1
        self._hold(run_id)

    def pin(self, run_id: str, digest: str, source: str) -> None:
        """Buffer the run's spec pin (after its admission or import): the sources once per digest per process."""
        if digest not in self._specs:
            self.later(q.INSERT_SPEC, (digest, source))
            self._specs.add(digest)
        self.later(q.PIN_RUN, (digest, run_id))

    def pinned(self, run_id: str) -> tuple[str, str | None] | None:
        self.sync()
        row = self.conn.execute(self.dialect.sql(q.SELECT_PIN), (run_id,)).fetchone()
        return None if row is None or row[0] is None else (row[0], row[1])

    def acquire(self, run_id: str) -> None:
        """Take the lease of an existing run, now; LeaseHeld when a live process owns it."""
        self.sync()
        conn = self.conn
        sql = self.dialect.sql
        with self._transaction(conn, exclusive=True):  # the read and the write are one step for every process
            self._lock_run(conn, run_id)
            row = conn.execute(sql(q.SELECT_LEASE), (run_id,)).fetchone()
            now = time.time()
            if row is not None and row[0] != self.owner and row[3] > now:
                _, pid, host, _ = row
                if host != self.host or alive(pid):
                    raise LeaseHeld(run_id, host, pid)
            conn.execute(sql(q.UPSERT_LEASE), (run_id, self.owner, self.pid, self.host, now + LEASE_SECONDS))
            conn.execute(sql(q.RUN_RUNNING), (now, run_id))
        self._active += 1
        self._hold(run_id)

    def stopped(
        self,
        run_id: str,
        status: str,
        result: dict[str, Any],
        steps: int,
        tokens: tuple[int, int],
        cost: float | None = None,
    ) -> None:
        """Buffer a stop: the run's row gets its status, counters, cost in USD (None: no priced call) and result
        (for listings; everything else about the run is its history rows, what an export is made from); the lease
        is let go."""
        now = time.time()
        self.later(q.RUN_STOPPED, (status, now, steps, tokens[0], tokens[1], encode({"result": result}), run_id, now))
        if cost is not None:
            self.later(q.RUN_COSTED, (cost, run_id, now))
        self.later(q.RELEASE_LEASE, (run_id, self.owner))
        self._held.discard(run_id)
        self._active = max(0, self._active - 1)

    def import_run(
        self, run_id: str, entry: str, spec: str | None, input: Any, result: Any, rows: list[dict[str, Any]]
    ) -> None:
        """A run from elsewhere into the tables, committed in one transaction and held by nobody (the resume that
        follows takes its lease); AgentError-free: the caller says what a clash means. Refuses a run id already here."""
        self.sync()
        conn = self.conn
        sql = self.dialect.sql
        now = time.time()
        status = result.get("stop_reason") if isinstance(result, dict) else None
        with self._transaction(conn, exclusive=True):
            if conn.execute(sql("SELECT 1 FROM runs WHERE id = ?"), (run_id,)).fetchone() is not None:
                raise KeyError(run_id)
            conn.execute(
                sql(q.INSERT_RUN), (run_id, entry, None if spec is None else storable(spec), encode(input), now, now)
            )
            conn.execute(sql(q.RUN_IMPORTED), (status or "running", encode({"result": result}), run_id))
            if rows:
                self._insert_events(
                    conn,
                    [
                        (
                            run_id,
                            r["seq"],
                            r["kind"],
                            None if r.get("key") is None else storable(r["key"]),
                            r.get("at", now),
                            encode(r["data"]),
                        )
                        for r in rows
                    ],
                )

    def _hold(self, run_id: str) -> None:
        self._held.add(run_id)
        if self._renewal is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return
            self._renewal = loop.call_later(LEASE_SECONDS / 3, self._renew)

    def _renew(self) -> None:
        self._renewal = None
        if not self._held or self._conn is None:
            return
        self._sql.append((q.RENEW_LEASES, (time.time() + LEASE_SECONDS, self.owner)))
        try:
            self.flush()
        except Exception:
            pass  # a busy database or a lost connection: the next renewal tries again, well inside the lease
        self._hold(next(iter(self._held)))

    # -- reading ---------------------------------------------------------------------

    def run(self, run_id: str) -> dict[str, Any] | None:
        self.sync()
        row = self.conn.execute(self.dialect.sql(f"SELECT {_RUN_COLUMNS} FROM runs WHERE id = ?"), (run_id,)).fetchone()
        return self._run_dict(row) if row else None

    def runs(self, status: str | None = None) -> list[dict[str, Any]]:
        self.sync()
        sql = f"SELECT {_RUN_COLUMNS} FROM runs"
        params: tuple[Any, ...] = ()
        if status:
            sql += " WHERE status = ?"
            params = (status,)
        found = self.conn.execute(self.dialect.sql(sql + " ORDER BY started, id"), params).fetchall()
        return [self._run_dict(r) for r in found]

    def listing(self, status: str | None = None, page: int = 500) -> Iterator[dict[str, Any]]:
        """Every run's index row (no input, no snapshot), oldest first, read a page at a time: what `plait runs`
        lists, in memory bounded by the page whatever the runs hold and however many there are. `status` filters
        (`crashed`: admitted, never stopped, and nobody holds it)."""
        self.sync()
        stored = "running" if status == "crashed" else status
        where = " AND status = ?" if stored else ""
        sql = self.dialect.sql(
            f"SELECT {_INDEX_COLUMNS} FROM runs WHERE (started > ? OR (started = ? AND id > ?)){where} "
            f"ORDER BY started, id LIMIT {int(page)}"
        )
        after: tuple[Any, ...] = (float("-inf"), float("-inf"), "")
        while True:
            found = self.conn.execute(sql, (*after, *((stored,) if stored else ()))).fetchall()
            for row in found:
                out = dict(zip(_INDEX_FIELDS, row))
                if out["status"] == "running" and not self._held_live(out["id"]):
                    out["status"] = "crashed"
                if status is None or out["status"] == status:
                    yield out
            if len(found) < page:
                return
            after = (found[-1][4], found[-1][4], found[-1][0])

    def events(self, run_id: str) -> Iterator[dict[str, Any]]:
        """A run's rows in order; a row whose data is not JSON comes with `data` None and `damaged` saying so."""
        self.sync()
        for seq, kind, key, at, data in self.conn.execute(self.dialect.sql(q.SELECT_EVENTS), (run_id,)).fetchall():
            try:
                yield {"seq": seq, "kind": kind, "key": key, "at": at, "data": json.loads(data)}
            except ValueError:
                yield {"seq": seq, "kind": kind, "key": key, "at": at, "data": None, "damaged": "its data is not JSON"}

    def reply_totals(self, run_id: str) -> tuple[int, int, int, float | None]:
        self.sync()
        calls = tokens_in = tokens_out = 0
        cost: float | None = None
        for (text,) in self.conn.execute(self.dialect.sql(q.SELECT_REPLIES), (run_id,)):
            try:
                data = json.loads(text)
            except ValueError:  # a damaged row counts for nothing here; `plait runs doctor` reports it
                continue
            if not isinstance(data, dict):
                continue
            calls += 1
            usage = data.get("usage") or (0, 0)
            tokens_in, tokens_out = tokens_in + usage[0], tokens_out + usage[1]
            if data.get("cost_usd") is not None:
                cost = (cost or 0.0) + data["cost_usd"]
        return calls, tokens_in, tokens_out, cost

    def lease(self, run_id: str) -> dict[str, Any] | None:
        row = self.conn.execute(self.dialect.sql(q.SELECT_LEASE), (run_id,)).fetchone()
        if row is None:
            return None
        live = row[3] > time.time() and (row[2] != self.host or alive(row[1]))
        return {"owner": row[0], "pid": row[1], "host": row[2], "expires": row[3], "live": live}

    def busy(self) -> set[str]:
        return set()

    def problems(self) -> list[str]:
        return []

    def damaged(self, run_id: str) -> list[str]:
        return []

    def delete(self, run_ids: list[str]) -> int:
        self.sync()
        conn = self.conn
        sql = self.dialect.sql
        gone = 0
        busy = self.busy()
        with self._transaction(conn, exclusive=True):
            for run_id in run_ids:
                if run_id in busy:
                    continue
                conn.execute(sql(q.DELETE_EVENTS), (run_id,))
                conn.execute(sql(q.DELETE_LEASE), (run_id,))
                gone += conn.execute(sql(q.DELETE_RUN), (run_id,)).rowcount
        return gone

    def _held_live(self, run_id: str) -> bool:
        lease = self.lease(run_id)
        return lease is not None and lease["live"]

    def _run_dict(self, row: tuple[Any, ...]) -> dict[str, Any]:
        """A run's row; an `input` or `snapshot` that is not JSON reads as None and is named in `damaged`, so one
        damaged run is reported as such and never stops another from being read."""
        out = dict(zip(_RUN_FIELDS, row))
        damaged = []
        try:
            out["input"] = json.loads(out["input"])
        except (TypeError, ValueError):
            out["input"] = None
            damaged.append("its input is not JSON")
        out["result"] = None
        if out["snapshot"] is not None:
            try:
                out["snapshot"] = json.loads(out["snapshot"])
                out["result"] = out["snapshot"].get("result")
            except (AttributeError, ValueError):
                out["snapshot"] = None
                damaged.append("its snapshot is not a JSON object")
        if damaged:
            out["damaged"] = damaged
        if out["status"] == "running" and not self._held_live(out["id"]):
            # Admitted, never stopped, and nobody holds it: the process died mid-run.
            out["status"] = "crashed"
        return out


#: The order a flush applies buffered statements in, each kind in one executemany (a thousand runs stopping in one
#: loop iteration are one statement, not a thousand): a run's row before its lease, both before its stop, the
#: release after it. Within a kind, the order they were buffered in; each is harmless to repeat (dialect.py).
_PHASES = {
    q.INSERT_RUN: 0,
    q.ADMIT_LEASE: 1,
    q.INSERT_SPEC: 2,
    q.PIN_RUN: 3,
    q.RUN_STOPPED: 4,
    q.RUN_COSTED: 4,
    q.RELEASE_LEASE: 5,
    q.RENEW_LEASES: 6,
}


def _phased(buffered: list[tuple[str, tuple[Any, ...]]]) -> list[tuple[str, list[tuple[Any, ...]]]]:
    groups: dict[str, list[tuple[Any, ...]]] = {}
    for statement, params in buffered:
        groups.setdefault(statement, []).append(params)
    return sorted(groups.items(), key=lambda group: _PHASES.get(group[0], len(_PHASES)))


def one_line(exc: BaseException) -> str:
    """An exception's message on one line (database drivers' messages span several)."""
    return " ".join(str(exc).split()) or type(exc).__name__


_RUN_FIELDS = (
    "id",
    "entry",
    "spec",
    "input",
    "status",
    "started",
    "updated",
    "steps",
    "input_tokens",
    "output_tokens",
    "snapshot",
    "spec_digest",
    "cost_usd",
)
_RUN_COLUMNS = ", ".join(_RUN_FIELDS)
#: What a listing reads of each run: its index row, never its input or snapshot (either can be megabytes).
_INDEX_FIELDS = (
    "id",
    "entry",
    "spec",
    "status",
    "started",
    "updated",
    "steps",
    "input_tokens",
    "output_tokens",
    "cost_usd",
)
_INDEX_COLUMNS = ", ".join(_INDEX_FIELDS)
