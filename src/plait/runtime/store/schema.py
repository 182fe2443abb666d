"""The journal's tables → SQL, as a tuple of migrations; a database → migrated to the newest version.

Migration N (1-based) turns a schema at version N-1 into version N. A database
written by a newer plait (a version this code does not know) is refused, never
guessed at. Values are JSON text: nothing is pickled and no class is rebuilt
from what is stored.
"""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "JournalVersionError", "migrate"]

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        # One row per run: written when the run is admitted, updated when it stops (`snapshot` is the
        # stop's `{"result": report}`, for listings; journals written by plait 0.2.0 hold the whole version-2
        # snapshot there, read for its `result` alone: `plait runs export` is made from the run's events).
        """CREATE TABLE runs (
            id TEXT PRIMARY KEY,
            entry TEXT NOT NULL,
            spec TEXT,
            input TEXT NOT NULL,
            status TEXT NOT NULL,
            started REAL NOT NULL,
            updated REAL NOT NULL,
            steps INTEGER NOT NULL DEFAULT 0,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            snapshot TEXT
        )""",
        "CREATE INDEX runs_status ON runs(status, started)",
        # The history: every model request and reply, tool intent and completion, state write,
        # decision, pause and stop, in the order the run made them (seq is per run).
        """CREATE TABLE events (
            run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            kind TEXT NOT NULL,
            key TEXT,
            at REAL NOT NULL,
            data TEXT NOT NULL,
            PRIMARY KEY (run_id, seq)
        )""",
        # Who may write a run: one owner at a time, until `expires` (renewed while it runs).
        """CREATE TABLE leases (
            run_id TEXT PRIMARY KEY,
            owner TEXT NOT NULL,
            pid INTEGER NOT NULL,
            host TEXT NOT NULL,
            expires REAL NOT NULL
        )""",
    ),
    (
        # Runs pinned to their spec: the digest of the spec's sources a run started with (NULL: a run journaled
        # before runs were pinned, which resumes unchecked), and each digest's sources once, however many runs
        # share them (`{"main": path, "files": {path: text}}`, paths relative to the spec's folder).
        "ALTER TABLE runs ADD COLUMN spec_digest TEXT",
        """CREATE TABLE specs (
            digest TEXT PRIMARY KEY,
            source TEXT NOT NULL
        )""",
    ),
    (
        # What a stopped run's priced model calls cost in USD, for listings (NULL: stopped before runs were
        # priced, or no call had a price).
        "ALTER TABLE runs ADD COLUMN cost_usd REAL",
    ),
)

SCHEMA_VERSION = len(MIGRATIONS)


class JournalVersionError(Exception):
    """The database was written by a newer plait."""


def migrate(execute: Callable[[str], Any]) -> int:
    """Bring the schema to SCHEMA_VERSION; returns the version found before.

    `execute` runs one statement (already in the database's dialect) and returns its cursor; the caller runs this
    inside one transaction that no other process can interleave with (SQLite: BEGIN IMMEDIATE; PostgreSQL: an
    advisory lock), so two processes opening a new journal at once migrate it once.
    """
    execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    row = execute("SELECT version FROM schema_version").fetchone()
    found = row[0] if row else 0
    if found > SCHEMA_VERSION:
        raise JournalVersionError(
            f"the run journal has schema version {found}, newer than this plait knows ({SCHEMA_VERSION}); upgrade plait"
        )
    for statements in MIGRATIONS[found:]:
        for sql in statements:
            execute(sql)
    if row is None:
        execute(f"INSERT INTO schema_version (version) VALUES ({SCHEMA_VERSION})")
    elif found != SCHEMA_VERSION:
        execute(f"UPDATE schema_version SET version = {SCHEMA_VERSION}")
    return found
