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

import contextlib
import os
import sqlite3
import time
from pathlib import Path
from typing import Any, Iterator

from .base import LeaseHeld, SQLJournal, StoreError, alive, encode, one_line
from .dialect import SQLITE
from .log import Segment, line, read, segments
from .schema import JournalVersionError, migrate

__all__ = ["JOURNAL_NAME", "LeaseHeld", "SQLiteJournal", "journal_path"]

JOURNAL_NAME = "journal.db"
#: Rows in this process's segment that trigger a move into the tables without waiting for a stop.
_INGEST_AT = 5000


def journal_path(project: str | os.PathLike[str]) -> Path:
    """Where a project's journal lives: `<project>/.plait/journal.db`."""
    return Path(project) / ".plait" / JOURNAL_NAME


class SQLiteJournal(SQLJournal):
    """One project's journal; opened on first use, shared by every run of the process that writes it."""

    dialect = SQLITE

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__()
        self.path = Path(path)
        self.log_dir = self.path.with_name(self.path.name + "-log")
        self._segment = Segment(self.log_dir, f"{self.pid}-{self.token}")
        #: Rows not yet appended to the segment, as lines (`_rows` holds them until they are in the tables).
        self._lines: list[str] = []

    @property
    def where(self) -> str:
        return str(self.path)

    # -- backend ---------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=10.0)
        conn.execute("PRAGMA journal_mode = WAL")
        sync = "FULL" if os.environ.get("PLAIT_JOURNAL_SYNC", "").lower() == "full" else "NORMAL"
        conn.execute(f"PRAGMA synchronous = {sync}")
        # Checkpoints are what fsync: a larger WAL between them (16 MB) makes them rare.
        conn.execute("PRAGMA wal_autocheckpoint = 4000")
        with self._transaction(conn, exclusive=True):
            migrate(conn.execute)
        return conn

    def open(self) -> None:
        try:
            self.conn  # noqa: B018 - opens and migrates, so a bad file is reported here, once
        except (JournalVersionError, OSError, sqlite3.Error) as exc:  # sqlite3.DatabaseError: not a database
            raise StoreError(f"cannot read the run journal {self.path}: {one_line(exc)}") from None

    @contextlib.contextmanager
    def _transaction(self, conn: Any, exclusive: bool = False) -> Iterator[Any]:
        conn.execute("BEGIN IMMEDIATE" if exclusive else "BEGIN")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def _opened(self) -> None:
        self._take_in_others()

    def exists(self) -> bool:
        return self._conn is not None or self.path.exists()

    def _close(self) -> None:
        self._segment.close()

    # -- writing ---------------------------------------------------------------------

    def event(self, run_id: str, seq: int, kind: str, key: str | None, data: Any) -> None:
        """Buffer one history row (durable after the next `durable()` or `flush()`)."""
        row = (run_id, seq, kind, key, time.time(), encode(data))
        self._lines.append(line(*row))
        self._rows.append(row)

    def _pending(self) -> bool:
        return bool(self._lines or self._sql)

    def _append(self) -> None:
        if self._lines:
            text = "".join(self._lines)
            self._lines = []
            self._segment.write(text)

    def _write(self) -> None:
        """Rows to the segment (one write); statements for the tables, or a large segment, to a commit."""
        self._append()
        if self._sql or len(self._rows) >= _INGEST_AT:
            self.flush()

    def flush(self) -> None:
        """Everything buffered into the tables, now, in one transaction; the segment starts again."""
        self._append()
        super().flush()

    def _flushed(self) -> None:
        self._segment.truncate()

    def settle(self) -> None:
        """After a stop: alone, everything goes into the tables now; with other runs in flight, the stop row is
        written (durable) and the table update rides with the next commit, so a thousand stops cost one."""
        if self._active > 0:
            self._append()
            if len(self._rows) < _INGEST_AT:
                return
        self.flush()

    def _take_in_others(self) -> None:
        """Move other processes' segments into the tables; delete those whose writer has died."""
        for path, pid in segments(self.log_dir):
            if path == self._segment.path:
                continue
            is_alive = alive(pid)  # this process's other journals included: theirs are live too
            rows = read(path)
            if rows:
                conn = self.conn
                with self._transaction(conn, exclusive=True):
                    self._insert_events(conn, rows)
            if not is_alive:
                path.unlink(missing_ok=True)

    def sync(self) -> None:
        """Before a read: this process's rows and every other process's segment are in the tables."""
        self.flush()
        if self._conn is not None:
            self._take_in_others()
