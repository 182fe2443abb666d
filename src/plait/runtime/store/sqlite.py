"""Journal rows → one SQLite database per project (`.plait/journal.db`, WAL), written through a segment file.

Every run of a process writes through one `SQLiteJournal`. A step that is
about to start a side effect awaits `durable()`: the rows buffered so far are
appended to this process's segment (log.py) in one write, which survives the
process being killed. With one run in flight that happens at once, in place;
with several, one write serves every run waiting in the same loop iteration.
Rows move into the tables in one transaction before any read, at a close, and
every few thousand rows. An admission (the run's row and lease) and a stop (its
status and result) are table statements applied with them, and are
segment lines too, written with the rows: so a run is admitted, durably, before
its first step, and a stop is durable before the caller hears of it, without a
transaction of their own. Every reader takes in every segment first (applying
those lines), so another process sees a run, its lease and its stop at once.

WAL with `synchronous = NORMAL`, and segment writes without fsync: what is
written survives a killed process; an OS crash or power cut can lose the last
rows (PLAIT_JOURNAL_SYNC=full makes table commits fsync, and commits admissions
and stops to the tables at once, as plait did before segments carried them). Leases say which
process may write a run; a lease whose holder died on this host is taken over
at once, one held elsewhere only when it expires.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any, Iterator

from .base import LeaseHeld, SQLJournal, StoreError, alive, encode, one_line, storable
from .dialect import DEFERRED, DEFERRED_NAMES, SQLITE
from .log import Damage, Segment, line, read, scan, segments
from .private import private_dir, private_file
from .schema import JournalVersionError, migrate

__all__ = ["JOURNAL_NAME", "QUARANTINE", "LeaseHeld", "SQLiteJournal", "journal_path"]

JOURNAL_NAME = "journal.db"
#: Beside the journal: where `plait runs doctor --repair` moves what it takes out (never deleted).
QUARANTINE = "journal.db-quarantine"
#: Each statement a segment line may name → how many parameters it takes.
_PARAMETERS = {name: sql.count("?") for name, sql in DEFERRED.items()}
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
        self._full = os.environ.get("PLAIT_JOURNAL_SYNC", "").lower() == "full"
        #: Lines of other processes' segments that could not be taken in, by segment (kept there, reported).
        self.damage: dict[Path, list[Damage]] = {}
        #: Every page was read back whole (PRAGMA quick_check) by `open`: done once per journal object.
        self._checked = False

    @property
    def where(self) -> str:
        return str(self.path)

    # -- backend ---------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        # Owner-only: the journal holds every prompt, reply, tool result and input of the project's runs.
        private_dir(self.path.parent)
        private_file(self.path)  # SQLite gives its -wal and -shm files the database file's permissions
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=10.0)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute(f"PRAGMA synchronous = {'FULL' if self._full else 'NORMAL'}")
        # Checkpoints are what fsync: a larger WAL between them (16 MB) makes them rare.
        conn.execute("PRAGMA wal_autocheckpoint = 4000")
        with self._transaction(conn, exclusive=True):
            migrate(conn.execute)
        return conn

    def open(self) -> None:
        """Open, migrate and take in other processes' segments, now: a journal that cannot be used is a StoreError
        naming the file and what to do, before a run does anything."""
        try:
            conn = self.conn  # opens and migrates, so a bad file is reported here, once
            if not self._checked:
                # A file whose header and schema read but whose pages are damaged fails only when a write reaches
                # them, after the run's effects: quick_check reads every page now (~0.15 s for 200 MB), once.
                found = conn.execute("PRAGMA quick_check(1)").fetchone()
                if found is None or found[0] != "ok":
                    raise sqlite3.DatabaseError(f"database disk image is malformed ({found[0] if found else '?'})")
                self._checked = True
        except JournalVersionError as exc:
            raise StoreError(
                f"cannot use the run journal {self.path}: {exc} (or pass --dir for another project)"
            ) from None
        except (OSError, sqlite3.Error) as exc:  # sqlite3.DatabaseError: not a database
            if self._conn is not None:  # opened, then a read failed: close it, so a retry starts clean
                self._conn.close()
                self._conn = None
            raise StoreError(
                f"cannot read the run journal {self.path}: {one_line(exc)}; move the file aside to start a new "
                "journal, and keep it (`sqlite3 FILE .recover` may get its runs back)"
            ) from None

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
        """The database, or a segment of a process that has not moved its rows into it yet."""
        return self._conn is not None or self.path.exists() or bool(segments(self.log_dir))

    def _close(self) -> None:
        self._segment.close()

    # -- writing ---------------------------------------------------------------------

    def event(self, run_id: str, seq: int, kind: str, key: str | None, data: Any) -> None:
        """Buffer one history row (durable after the next `durable()` or `flush()`)."""
        row = (run_id, seq, kind, None if key is None else storable(key), time.time(), encode(data))
        self._lines.append(line(*row))
        self._rows.append(row)

    def later(self, sql: str, params: tuple[Any, ...]) -> None:
        """A table statement (an admission, a stop), applied at the next flush; durable now as a segment line too,
        so a process killed before that flush loses neither (whoever takes its segment in applies the line)."""
        super().later(sql, params)
        self._lines.append(line("", 0, "~" + DEFERRED_NAMES[sql], None, time.time(), encode(params)))

    def _pending(self) -> bool:
        return bool(self._lines)

    def _append(self) -> None:
        if self._lines:
            text = "".join(self._lines)
            self._lines = []
            self._segment.write(text)

    def _write(self) -> None:
        """Rows and statements to the segment (one write); a large segment to the tables as well."""
        self._append()
        if (self._full and self._sql) or len(self._rows) >= _INGEST_AT:
            self.flush()

    def flush(self) -> None:
        """Everything buffered into the tables, now, in one transaction; the segment starts again."""
        self._append()
        super().flush()

    def _flushed(self) -> None:
        self._segment.truncate()

    def settle(self) -> None:
        """After a stop: the stop row and the run's new status are written to the segment (durable); the tables
        get them with the next commit (a read, a close, a large segment), so a thousand stops cost one."""
        self._write()

    def _take_in_others(self) -> None:
        """Move other processes' segments into the tables; delete those whose writer has died.

        A damaged line (log.scan) is left out and reported in `damage`; the segment's other rows go in, and a dead
        writer's damaged segment is kept where it is (never deleted) until `plait runs doctor --repair` moves it to
        the quarantine. Only the runs named in damaged lines are affected; every other run reads as before."""
        found = segments(self.log_dir)
        for gone in set(self.damage) - {path for path, _ in found}:  # moved aside (doctor --repair) since
            del self.damage[gone]
        for path, pid in found:
            if path == self._segment.path:
                continue
            is_alive = alive(pid)  # this process's other journals included: theirs are live too
            damage = self._take_in(path)
            if damage:
                self.damage[path] = damage
            else:
                self.damage.pop(path, None)
                if not is_alive:
                    path.unlink(missing_ok=True)

    def _take_in(self, path: Path) -> list[Damage]:
        """One segment's well-formed rows into the tables, in one transaction; its damaged lines."""
        rows, damage = scan(path, _PARAMETERS)
        if not rows:
            return damage
        statements = [(DEFERRED[r[2][1:]], r[5]) for r in rows if r[1] == 0]
        events = [r for r in rows if r[1] != 0]
        conn = self.conn
        try:
            with self._transaction(conn, exclusive=True):
                for sql, params in statements:  # admissions first: a run's row comes before its history
                    conn.execute(sql, tuple(json.loads(params)))
                if events:
                    self._insert_events(conn, events)
        except sqlite3.IntegrityError as exc:  # well-formed lines the tables refuse (a NULL where one cannot be)
            return [*damage, Damage(path, 0, f"its rows cannot be taken in: {one_line(exc)}")]
        return damage

    def problems(self) -> list[str]:
        """What could not be read, one line each: what commands warn about and `plait runs doctor` lists."""
        return [str(d) for found in self.damage.values() for d in found]

    def damaged(self, run_id: str) -> list[str]:
        found: list[str] = []
        for path, lines in self.damage.items():
            unnamed = [d for d in lines if d.run_id is None]
            if unnamed and any(r[0] == run_id for r in read(path)):
                found += map(str, unnamed)
            found += [str(d) for d in lines if d.run_id == run_id]
        return found

    def quarantine(self, path: Path) -> Path:
        """Move a dead writer's segment (its good rows already in the tables) to the quarantine: kept, not read again."""
        folder = self.path.with_name(QUARANTINE)
        private_dir(folder)
        target = folder / f"{time.strftime('%Y%m%d-%H%M%S')}-{path.name}"
        os.replace(path, target)
        self.damage.pop(path, None)
        return target

    def busy(self) -> set[str]:
        """Runs in a live writer's segment: every read applies its admission and stop lines again, so a run deleted
        now would come back until that writer moves its segment in (at its close, or every 5,000 rows)."""
        found: set[str] = set()
        for path, pid in segments(self.log_dir):
            if path != self._segment.path and alive(pid):
                found.update(r[0] for r in read(path) if r[1] != 0)
        return found

    def sync(self) -> None:
        """Before a read: this process's rows and every other process's segment are in the tables."""
        self.flush()
        if self._conn is not None:
            self._take_in_others()
