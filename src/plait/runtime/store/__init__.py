"""Runs → the project's journal (`.plait/journal.db`, or a PostgreSQL database), and back: what makes a run durable.

- `base.Journal`: the interface a run store offers; `base.SQLJournal` what both backends share.
- `sqlite.SQLiteJournal`: the embedded default (WAL, a segment file, group commit).
- `postgres.PostgresJournal`: a database shared by processes and hosts (`--store postgresql://...`).
- `dialect`: every SQL difference between the two; `schema`: the tables, as a tuple of migrations.
- `urls.open_store`: a store URL (or none) → the journal to open.
- `run_journal.RunJournal`: one run's rows and, on resume, what they replay.
- `effects`: the model- and tool-call seams (the effects ledger).
- `lifecycle`: a run's start, stop and the one entry back into a stored run (`restore`).
- `export`: a run's rows → its export (made from the journal, never stored), and any stored form → rows.
- `snapshot`: the JSON snapshot's versions (`Run.snapshot()`, plait 0.1's stored runs).
"""

from .base import Journal, JournalWriteError, LeaseHeld, StoreError
from .run_journal import RunJournal, idempotency_key
from .schema import SCHEMA_VERSION, JournalVersionError
from .snapshot import SNAPSHOT_VERSION, SnapshotError, legacy_snapshot, upgrade
from .sqlite import JOURNAL_NAME, SQLiteJournal, journal_path
from .urls import open_store

__all__ = [
    "JOURNAL_NAME",
    "SCHEMA_VERSION",
    "SNAPSHOT_VERSION",
    "Journal",
    "JournalVersionError",
    "JournalWriteError",
    "LeaseHeld",
    "RunJournal",
    "SQLiteJournal",
    "SnapshotError",
    "StoreError",
    "idempotency_key",
    "journal_path",
    "legacy_snapshot",
    "open_store",
    "upgrade",
]
