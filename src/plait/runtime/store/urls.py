"""A store URL (or none) and a project directory → the journal to open; a bad URL → StoreError, one line.

No URL is the embedded default, SQLite at `<project>/.plait/journal.db`. A
`postgresql://` (or `postgres://`) URL is a PostgreSQL database, the journal a
batch's executors in other processes share: pass them the URL, never a journal
object (each process opens its own connection).
"""

from __future__ import annotations

import os

from .base import Journal, StoreError
from .postgres import SCHEMES, PostgresJournal, redact
from .sqlite import SQLiteJournal, journal_path

__all__ = ["open_store"]


def open_store(url: str | None, project: str | os.PathLike[str] | None = None) -> Journal:
    """The journal `url` names (not yet connected: `open()` connects, or the first use does)."""
    if not url:
        if project is None:
            raise StoreError("no run store: give a postgresql:// URL or a project directory")
        return SQLiteJournal(journal_path(project))
    scheme, sep, rest = url.partition("://")
    if sep and scheme.lower() in SCHEMES and rest:
        return PostgresJournal(url)
    shown = redact(url) if sep else url
    raise StoreError(
        f"--store takes a postgresql://USER@HOST[:PORT]/DATABASE URL, not `{shown}` "
        "(without --store, runs are kept in .plait/journal.db beside the spec)"
    )
