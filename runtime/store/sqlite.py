"""Journal rows → one SQLite database per project (`.plait/journal.db`, WAL), committed in groups.

Every run of a process writes through one `SQLiteJournal`. Rows are buffered
and committed together: a step that is about to start a side effect awaits
`durable()`. With one run in flight that commits at once, in place (a trip
through the event loop would cost more than the commit); with several it
schedules one commit for everything buffered so far, by every run, and
resumes every waiter when it lands. So a thousand runs that reach a tool call
in the same loop iteration cost one commit, and no side effect starts before
the rows that lead to it are on disk.

WAL with `synchronous = NORMAL`: a commit survives the process being killed
(SIGKILL included); only an OS crash or power cut can lose the last few
commits (PLAIT_JOURNAL_SYNC=full makes every commit fsync). Leases say which
process may write a run; a lease whose holder died on this host is taken
over at once, one held elsewhere only when it expires.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sqlite3
import time
import uuid
from pathlib import Path
from typing import Any, Iterator

from .schema import migrate

__all__ = ["JOURNAL_NAME", "LEASE_SECONDS", "LeaseHeld", "SQLiteJournal", "journal_path"]

JOURNAL_NAME = "journal.db"
#: How long a lease lasts without renewal; a live holder renews it every third of that.
LEASE_SECONDS = 30.0

_INSERT_EVENT = "INSERT INTO events (run_id, seq, kind, key, at, data) VALUES (?, ?, ?, ?, ?, ?)"
#: One encoder for every row (json.dumps with options builds a new one per call).
encode = json.JSONEncoder(ensure_ascii=False, default=str, separators=(",", ":")).encode


def journal_path(project: str | os.PathLike[str]) -> Path:
    """Where a project's journal lives: `<project>/.plait/journal.db`."""
    return Path(project) / ".plait" / JOURNAL_NAME


class LeaseHeld(Exception):
    """Another live process owns the run."""

    def __init__(self, run_id: str, host: str, pid: int) -> None:
        self.run_id, self.host, self.pid = run_id, host, pid
        super().__init__(f"run {run_id} is being run by another process (pid {pid} on {host}); wait for it to stop, then resume")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class SQLiteJournal:
    """One project's journal; opened on first use, shared by every run of the process that writes it."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.host = socket.gethostname()
        self.pid = os.getpid()
        self.owner = f"{self.host}:{self.pid}:{uuid.uuid4().hex[:8]}"
        self._conn: sqlite3.Connection | None = None
        #: Buffered statements, in order: (sql, params) or (None, event row) for the common insert.
        self._pending: list[tuple[str | None, tuple[Any, ...]]] = []
        self._waiting: tuple[asyncio.AbstractEventLoop, asyncio.Future[None]] | None = None
        self._held: set[str] = set()
        #: Runs of this process admitted or resumed and not yet stopped.
        self._active = 0
        self._renewal: asyncio.TimerHandle | None = None

    # -- connection ------------------------------------------------------------------

    @property
    def conn(self) -> sqlite3.Connection:
        conn = self._conn
        if conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=10.0)
            conn.execute("PRAGMA journal_mode = WAL")
            sync = "FULL" if os.environ.get("PLAIT_JOURNAL_SYNC", "").lower() == "full" else "NORMAL"
            conn.execute(f"PRAGMA synchronous = {sync}")
            conn.execute("PRAGMA foreign_keys = ON")
            migrate(conn)
            self._conn = conn
        return conn

    def exists(self) -> bool:
        return self._conn is not None or self.path.exists()

    def close(self) -> None:
        self.flush()
        if self._renewal is not None:
            self._renewal.cancel()
            self._renewal = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # -- writing ---------------------------------------------------------------------

    def event(self, run_id: str, seq: int, kind: str, key: str | None, data: Any) -> None:
        """Buffer one history row (committed by the next `durable()` or `flush()`)."""
        self._pending.append((None, (run_id, seq, kind, key, time.time(), encode(data))))

    def later(self, sql: str, params: tuple[Any, ...]) -> None:
        self._pending.append((sql, params))

    async def durable(self) -> None:
        """Until every row buffered so far is committed: one commit for all the runs waiting now."""
        if not self._pending:
            return
        if self._active <= 1 and self._waiting is None:  # alone: nobody to share a commit with
            self._commit_now()
            return
        loop = asyncio.get_running_loop()
        waiting = self._waiting
        if waiting is not None and waiting[0] is not loop:  # left over from a loop that ended
            self.flush()
            waiting = None
            if not self._pending:
                return
        if waiting is None:
            future = loop.create_future()
            self._waiting = (loop, future)
            loop.call_soon(self._commit_group)
        else:
            future = waiting[1]
        # Shielded: one waiter being cancelled must not cancel the commit the others wait for.
        await asyncio.shield(future)

    def _commit_now(self) -> None:
        try:
            self.flush()
        except Exception as exc:
            raise JournalWriteError(f"the run journal {self.path} could not be written: {exc}") from exc

    def _commit_group(self) -> None:
        waiting, self._waiting = self._waiting, None
        try:
            self.flush()
        except Exception as exc:
            if waiting is not None and not waiting[1].done():
                waiting[1].set_exception(JournalWriteError(f"the run journal {self.path} could not be written: {exc}"))
            return
        if waiting is not None and not waiting[1].done():
            waiting[1].set_result(None)

    def flush(self) -> None:
        """Commit everything buffered, now, in one transaction."""
        pending = self._pending
        if not pending:
            return
        self._pending = []
        conn = self.conn
        conn.execute("BEGIN")
        try:
            rows: list[tuple[Any, ...]] = []
            for sql, params in pending:
                if sql is None:
                    rows.append(params)
                    continue
                if rows:
                    conn.executemany(_INSERT_EVENT, rows)
                    rows = []
                conn.execute(sql, params)
            if rows:
                conn.executemany(_INSERT_EVENT, rows)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    # -- runs and leases -------------------------------------------------------------

    def admit(self, run_id: str, entry: str, spec: str | None, input: Any) -> None:
        """Buffer a new run's row and its lease (the caller awaits `durable()` before the first step)."""
        now = time.time()
        self.later("INSERT INTO runs (id, entry, spec, input, status, started, updated) VALUES (?, ?, ?, ?, 'running', ?, ?)",
                   (run_id, entry, spec, encode(input), now, now))
        self.later("INSERT OR REPLACE INTO leases (run_id, owner, pid, host, expires) VALUES (?, ?, ?, ?, ?)",
                   (run_id, self.owner, self.pid, self.host, now + LEASE_SECONDS))
        self._active += 1
        self._hold(run_id)

    def acquire(self, run_id: str) -> None:
        """Take the lease of an existing run, now; LeaseHeld when a live process owns it."""
        self.flush()
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")  # the read and the write are one step for every process
        try:
            row = conn.execute("SELECT owner, pid, host, expires FROM leases WHERE run_id = ?", (run_id,)).fetchone()
            now = time.time()
            if row is not None and row[0] != self.owner and row[3] > now:
                owner, pid, host, _ = row
                if host != self.host or _alive(pid):
                    raise LeaseHeld(run_id, host, pid)
            conn.execute("INSERT OR REPLACE INTO leases (run_id, owner, pid, host, expires) VALUES (?, ?, ?, ?, ?)",
                         (run_id, self.owner, self.pid, self.host, now + LEASE_SECONDS))
            conn.execute("UPDATE runs SET status = 'running', updated = ? WHERE id = ?", (now, run_id))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        self._active += 1
        self._hold(run_id)

    def stopped(self, run_id: str, status: str, snapshot: dict[str, Any], steps: int, tokens: tuple[int, int]) -> None:
        """Buffer a stop: the run's row gets its status and export snapshot (the result is its `result`); the lease is let go."""
        self.later("UPDATE runs SET status = ?, updated = ?, steps = ?, input_tokens = ?, output_tokens = ?, snapshot = ? "
                   "WHERE id = ?", (status, time.time(), steps, tokens[0], tokens[1], encode(snapshot), run_id))
        self.later("DELETE FROM leases WHERE run_id = ? AND owner = ?", (run_id, self.owner))
        self._held.discard(run_id)
        self._active = max(0, self._active - 1)

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
        self.later("UPDATE leases SET expires = ? WHERE owner = ?", (time.time() + LEASE_SECONDS, self.owner))
        try:
            self.flush()
        except sqlite3.Error:
            pass  # a busy database: the next renewal tries again, well inside the lease
        self._hold(next(iter(self._held)))

    # -- reading ---------------------------------------------------------------------

    def run(self, run_id: str) -> dict[str, Any] | None:
        self.flush()
        row = self.conn.execute(f"SELECT {_RUN_COLUMNS} FROM runs WHERE id = ?", (run_id,)).fetchone()
        return self._run_dict(row) if row else None

    def runs(self, status: str | None = None) -> list[dict[str, Any]]:
        self.flush()
        sql = f"SELECT {_RUN_COLUMNS} FROM runs"
        params: tuple[Any, ...] = ()
        if status:
            sql += " WHERE status = ?"
            params = (status,)
        return [self._run_dict(r) for r in self.conn.execute(sql + " ORDER BY started, id", params)]

    def events(self, run_id: str) -> Iterator[dict[str, Any]]:
        self.flush()
        for seq, kind, key, at, data in self.conn.execute(
                "SELECT seq, kind, key, at, data FROM events WHERE run_id = ? ORDER BY seq", (run_id,)):
            yield {"seq": seq, "kind": kind, "key": key, "at": at, "data": json.loads(data)}

    def lease(self, run_id: str) -> dict[str, Any] | None:
        row = self.conn.execute("SELECT owner, pid, host, expires FROM leases WHERE run_id = ?", (run_id,)).fetchone()
        if row is None:
            return None
        live = row[3] > time.time() and (row[2] != self.host or _alive(row[1]))
        return {"owner": row[0], "pid": row[1], "host": row[2], "expires": row[3], "live": live}

    def delete(self, run_ids: list[str]) -> int:
        self.flush()
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            gone = 0
            for run_id in run_ids:
                conn.execute("DELETE FROM events WHERE run_id = ?", (run_id,))
                conn.execute("DELETE FROM leases WHERE run_id = ?", (run_id,))
                gone += conn.execute("DELETE FROM runs WHERE id = ?", (run_id,)).rowcount
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return gone

    def _run_dict(self, row: tuple[Any, ...]) -> dict[str, Any]:
        out = dict(zip(_RUN_FIELDS, row))
        out["input"] = json.loads(out["input"])
        out["result"] = None
        if out["snapshot"] is not None:
            out["snapshot"] = json.loads(out["snapshot"])
            out["result"] = out["snapshot"].get("result")
        if out["status"] == "running":
            lease = self.lease(out["id"])
            if lease is None or not lease["live"]:
                # Admitted, never stopped, and nobody holds it: the process died mid-run.
                out["status"] = "crashed"
        return out


_RUN_FIELDS = ("id", "entry", "spec", "input", "status", "started", "updated", "steps", "input_tokens", "output_tokens", "snapshot")
_RUN_COLUMNS = ", ".join(_RUN_FIELDS)


class JournalWriteError(Exception):
    """A commit failed (disk full, read-only file system): the run stops rather than act unrecorded."""
