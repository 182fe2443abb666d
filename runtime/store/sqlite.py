"""Journal rows → one SQLite database per project (`.plait/journal.db`, WAL), written through a segment file.

Every run of a process writes through one `SQLiteJournal`. A step that is
about to start a side effect awaits `durable()`: the rows buffered so far are
appended to this process's segment (log.py) in one write, which survives the
process being killed. With one run in flight that happens at once, in place;
with several, one write serves every run waiting in the same loop iteration.
Rows move into the tables in one transaction at a stop, before any read, and
every few thousand rows; admissions and stops are table statements committed
with them (an admission is committed before the run's first step, so other
processes see the run and its lease at once).

WAL with `synchronous = NORMAL`, and segment writes without fsync: what is
written survives a killed process; an OS crash or power cut can lose the last
rows (PLAIT_JOURNAL_SYNC=full makes table commits fsync). Leases say which
process may write a run; a lease whose holder died on this host is taken over
at once, one held elsewhere only when it expires.
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

from .log import Segment, line, read, segments
from .schema import migrate

__all__ = ["JOURNAL_NAME", "LEASE_SECONDS", "LeaseHeld", "SQLiteJournal", "journal_path"]

JOURNAL_NAME = "journal.db"
#: How long a lease lasts without renewal; a live holder renews it every third of that.
LEASE_SECONDS = 30.0

# OR IGNORE: a row may come in twice (read from a live process's segment, then committed by it); one whose run
# was deleted meanwhile is dropped.
_INSERT_EVENT = (
    "INSERT OR IGNORE INTO events (run_id, seq, kind, key, at, data) SELECT ?1, ?2, ?3, ?4, ?5, ?6 "
    "WHERE EXISTS (SELECT 1 FROM runs WHERE id = ?1)"
)
#: Rows in this process's segment that trigger a move into the tables without waiting for a stop.
_INGEST_AT = 5000
#: One encoder for every row (json.dumps with options builds a new one per call).
encode = json.JSONEncoder(ensure_ascii=False, default=str, separators=(",", ":")).encode


def journal_path(project: str | os.PathLike[str]) -> Path:
    """Where a project's journal lives: `<project>/.plait/journal.db`."""
    return Path(project) / ".plait" / JOURNAL_NAME


class LeaseHeld(Exception):
    """Another live process owns the run."""

    def __init__(self, run_id: str, host: str, pid: int) -> None:
        self.run_id, self.host, self.pid = run_id, host, pid
        super().__init__(
            f"run {run_id} is being run by another process (pid {pid} on {host}); wait for it to stop, then resume"
        )


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
        token = uuid.uuid4().hex[:8]
        self.owner = f"{self.host}:{self.pid}:{token}"
        self._conn: sqlite3.Connection | None = None
        self.log_dir = self.path.with_name(self.path.name + "-log")
        self._segment = Segment(self.log_dir, f"{self.pid}-{token}")
        #: Rows not yet appended to the segment, as lines; and rows in the segment, not yet in the tables.
        self._lines: list[str] = []
        self._unsynced: list[tuple[Any, ...]] = []
        #: Statements for the tables (admissions, stops, leases), run with the next flush.
        self._sql: list[tuple[str, tuple[Any, ...]]] = []
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
            # Checkpoints are what fsync: a larger WAL between them (16 MB) makes them rare.
            conn.execute("PRAGMA wal_autocheckpoint = 4000")
            migrate(conn)
            self._conn = conn
            self._take_in_others()
        return conn

    def exists(self) -> bool:
        return self._conn is not None or self.path.exists()

    def close(self) -> None:
        self.flush()
        if self._renewal is not None:
            self._renewal.cancel()
            self._renewal = None
        self._segment.close()
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # -- writing ---------------------------------------------------------------------

    def event(self, run_id: str, seq: int, kind: str, key: str | None, data: Any) -> None:
        """Buffer one history row (durable after the next `durable()` or `flush()`)."""
        row = (run_id, seq, kind, key, time.time(), encode(data))
        self._lines.append(line(*row))
        self._unsynced.append(row)

    def later(self, sql: str, params: tuple[Any, ...]) -> None:
        self._sql.append((sql, params))

    async def durable(self) -> None:
        """Until every row buffered so far is durable: one write (or commit) for all the runs waiting now."""
        if not self._lines and not self._sql:
            return
        if self._active <= 1 and self._waiting is None:  # alone: nobody to share a write with
            self._write_now()
            return
        loop = asyncio.get_running_loop()
        waiting = self._waiting
        if waiting is not None and waiting[0] is not loop:  # left over from a loop that ended
            self._write_now()
            waiting = None
            if not self._lines and not self._sql:
                return
        if waiting is None:
            future = loop.create_future()
            self._waiting = (loop, future)
            loop.call_soon(self._write_group)
        else:
            future = waiting[1]
        # Shielded: one waiter being cancelled must not cancel the write the others wait for.
        await asyncio.shield(future)

    def _write_now(self) -> None:
        try:
            self._write()
        except Exception as exc:
            raise JournalWriteError(f"the run journal {self.path} could not be written: {exc}") from exc

    def _write_group(self) -> None:
        waiting, self._waiting = self._waiting, None
        try:
            self._write()
        except Exception as exc:
            if waiting is not None and not waiting[1].done():
                waiting[1].set_exception(JournalWriteError(f"the run journal {self.path} could not be written: {exc}"))
            return
        if waiting is not None and not waiting[1].done():
            waiting[1].set_result(None)

    def _write(self) -> None:
        """Rows to the segment (one write); statements for the tables, or a large segment, to a commit."""
        if self._lines:
            text = "".join(self._lines)
            self._lines = []
            self._segment.write(text)
        if self._sql or len(self._unsynced) >= _INGEST_AT:
            self.flush()

    def flush(self) -> None:
        """Everything buffered into the tables, now, in one transaction; the segment starts again."""
        if self._lines:
            text = "".join(self._lines)
            self._lines = []
            self._segment.write(text)
        if not self._sql and not self._unsynced:
            return
        sql, self._sql = self._sql, []
        rows, self._unsynced = self._unsynced, []
        conn = self.conn
        conn.execute("BEGIN")
        try:
            for statement, params in sql:  # admissions first: a run's row comes before its history
                conn.execute(statement, params)
            if rows:
                conn.executemany(_INSERT_EVENT, rows)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        self._segment.truncate()

    def settle(self) -> None:
        """After a stop: alone, everything goes into the tables now; with other runs in flight, the stop row is
        written (durable) and the table update rides with the next commit, so a thousand stops cost one."""
        if self._active > 0:
            if self._lines:
                text = "".join(self._lines)
                self._lines = []
                self._segment.write(text)
            if len(self._unsynced) < _INGEST_AT:
                return
        self.flush()

    def _take_in_others(self) -> None:
        """Move other processes' segments into the tables; delete those whose writer has died."""
        for path, pid in segments(self.log_dir):
            if path == self._segment.path:
                continue
            alive = _alive(pid)  # this process's other journals included: theirs are live too
            rows = read(path)
            if rows:
                conn = self.conn
                conn.execute("BEGIN IMMEDIATE")
                try:
                    conn.executemany(_INSERT_EVENT, rows)
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
            if not alive:
                path.unlink(missing_ok=True)

    def sync(self) -> None:
        """Before a read: this process's rows and every other process's segment are in the tables."""
        self.flush()
        if self._conn is not None:
            self._take_in_others()

    # -- runs and leases -------------------------------------------------------------

    def admit(self, run_id: str, entry: str, spec: str | None, input: Any) -> None:
        """Buffer a new run's row and its lease (the caller awaits `durable()` before the first step)."""
        now = time.time()
        self.later(
            "INSERT INTO runs (id, entry, spec, input, status, started, updated) VALUES (?, ?, ?, ?, 'running', ?, ?)",
            (run_id, entry, spec, encode(input), now, now),
        )
        self.later(
            "INSERT OR REPLACE INTO leases (run_id, owner, pid, host, expires) VALUES (?, ?, ?, ?, ?)",
            (run_id, self.owner, self.pid, self.host, now + LEASE_SECONDS),
        )
        self._active += 1
        self._hold(run_id)

    def acquire(self, run_id: str) -> None:
        """Take the lease of an existing run, now; LeaseHeld when a live process owns it."""
        self.sync()
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")  # the read and the write are one step for every process
        try:
            row = conn.execute("SELECT owner, pid, host, expires FROM leases WHERE run_id = ?", (run_id,)).fetchone()
            now = time.time()
            if row is not None and row[0] != self.owner and row[3] > now:
                owner, pid, host, _ = row
                if host != self.host or _alive(pid):
                    raise LeaseHeld(run_id, host, pid)
            conn.execute(
                "INSERT OR REPLACE INTO leases (run_id, owner, pid, host, expires) VALUES (?, ?, ?, ?, ?)",
                (run_id, self.owner, self.pid, self.host, now + LEASE_SECONDS),
            )
            conn.execute("UPDATE runs SET status = 'running', updated = ? WHERE id = ?", (now, run_id))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        self._active += 1
        self._hold(run_id)

    def stopped(self, run_id: str, status: str, snapshot: dict[str, Any], steps: int, tokens: tuple[int, int]) -> None:
        """Buffer a stop: the run's row gets its status and export snapshot (the result is its `result`); the lease is let go."""
        self.later(
            "UPDATE runs SET status = ?, updated = ?, steps = ?, input_tokens = ?, output_tokens = ?, snapshot = ? "
            "WHERE id = ?",
            (status, time.time(), steps, tokens[0], tokens[1], encode(snapshot), run_id),
        )
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
        self.sync()
        row = self.conn.execute(f"SELECT {_RUN_COLUMNS} FROM runs WHERE id = ?", (run_id,)).fetchone()
        return self._run_dict(row) if row else None

    def runs(self, status: str | None = None) -> list[dict[str, Any]]:
        self.sync()
        sql = f"SELECT {_RUN_COLUMNS} FROM runs"
        params: tuple[Any, ...] = ()
        if status:
            sql += " WHERE status = ?"
            params = (status,)
        return [self._run_dict(r) for r in self.conn.execute(sql + " ORDER BY started, id", params)]

    def events(self, run_id: str) -> Iterator[dict[str, Any]]:
        self.sync()
        for seq, kind, key, at, data in self.conn.execute(
            "SELECT seq, kind, key, at, data FROM events WHERE run_id = ? ORDER BY seq", (run_id,)
        ):
            yield {"seq": seq, "kind": kind, "key": key, "at": at, "data": json.loads(data)}

    def lease(self, run_id: str) -> dict[str, Any] | None:
        row = self.conn.execute("SELECT owner, pid, host, expires FROM leases WHERE run_id = ?", (run_id,)).fetchone()
        if row is None:
            return None
        live = row[3] > time.time() and (row[2] != self.host or _alive(row[1]))
        return {"owner": row[0], "pid": row[1], "host": row[2], "expires": row[3], "live": live}

    def delete(self, run_ids: list[str]) -> int:
        self.sync()
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
)
_RUN_COLUMNS = ", ".join(_RUN_FIELDS)


class JournalWriteError(Exception):
    """A commit failed (disk full, read-only file system): the run stops rather than act unrecorded."""
