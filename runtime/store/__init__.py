"""Runs → the project's journal (`.plait/journal.db`), and back: what makes a run durable.

- `sqlite.SQLiteJournal`: the database (WAL, group commit, leases, queries).
- `run_journal.RunJournal`: one run's rows and, on resume, what they replay.
- `effects`: the model- and tool-call seams (the effects ledger).
- `snapshot`: the JSON snapshot's versions (export, and plait 0.1's stored runs).
- `schema`: the tables, as a tuple of migrations.
"""

from .run_journal import RunJournal, idempotency_key
from .schema import SCHEMA_VERSION, JournalVersionError
from .snapshot import SNAPSHOT_VERSION, SnapshotError, legacy_snapshot, upgrade
from .sqlite import JOURNAL_NAME, LeaseHeld, SQLiteJournal, journal_path

__all__ = [
    "JOURNAL_NAME",
    "SCHEMA_VERSION",
    "SNAPSHOT_VERSION",
    "JournalVersionError",
    "LeaseHeld",
    "RunJournal",
    "SQLiteJournal",
    "SnapshotError",
    "idempotency_key",
    "journal_path",
    "legacy_snapshot",
    "upgrade",
]
