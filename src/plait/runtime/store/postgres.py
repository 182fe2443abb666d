"""Journal rows → a PostgreSQL database (`--store postgresql://...`): one journal shared by many processes and hosts.

The same schema (schema.py, in dialect.py's PostgreSQL text) and the same
journal as SQLite (base.py); what differs is how a row becomes durable. There
is no segment file: the journal is shared by processes on other hosts (batch
executors), so a row is durable when it is committed on the server. `durable()`
commits every row buffered so far in one transaction, one for all the runs
waiting in the same loop iteration; a run's row and its lease are committed
before its first step.

Leases: a run's lease is read and written in one transaction that first locks
the run's row (`SELECT ... FOR UPDATE`), so two processes resuming the same run
take turns and the second sees the first's lease: exactly one wins. A row lock
rather than an advisory lock: it names the run itself (no hashing of ids into a
shared key space), ends with the transaction whatever happens to the client,
and works through transaction-pooling proxies, which session advisory locks do not.

psycopg (v3) is imported only when a PostgreSQL store is opened (the `postgres` extra).
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from .base import SQLJournal, StoreError, one_line
from .dialect import LOCK_RUN, POSTGRES
from .schema import JournalVersionError, migrate

__all__ = ["SCHEMES", "PostgresJournal", "redact"]

SCHEMES = ("postgresql", "postgres")
#: The advisory lock two processes migrating one new database at once take turns on (any constant would do).
_MIGRATION_LOCK = 0x706C6169  # "plai"


def redact(url: str) -> str:
    """The URL without its password (in the authority or a `password=` query parameter): what messages show."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, _, hostport = netloc.rpartition("@")
            user, sep, _ = userinfo.partition(":")
            netloc = f"{user}{':***' if sep else ''}@{hostport}"
        query = urlencode(
            [(k, "***" if k.lower() == "password" else v) for k, v in parse_qsl(parts.query, keep_blank_values=True)],
            safe="*",
        )
        if netloc == parts.netloc and query == parts.query:
            return url  # nothing to mask: urlunsplit would drop an empty authority (sqlite:///x → sqlite:/x)
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    except ValueError:
        return f"{url.partition(':')[0]}://..."


class PostgresJournal(SQLJournal):
    """A journal in a PostgreSQL database; the connection opens on first use."""

    dialect = POSTGRES

    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = url
        self._where = redact(url)

    @property
    def where(self) -> str:
        return self._where

    def _connect(self) -> Any:
        try:
            import psycopg
        except ImportError:
            raise StoreError(
                "a postgresql:// store needs psycopg: pip install -e '.[postgres]' in plait's clone (or psycopg[binary])"
            ) from None
        try:
            conn = psycopg.connect(self.url, autocommit=True, connect_timeout=10, application_name="plait")
        except psycopg.Error as exc:
            raise StoreError(f"cannot connect to the run store {self.where}: {self._reason(exc)}") from None
        try:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
                migrate(lambda sql: conn.execute(POSTGRES.sql(sql)))
        except JournalVersionError:
            conn.close()
            raise
        except psycopg.Error as exc:
            conn.close()
            raise StoreError(f"cannot use the run store {self.where}: {self._reason(exc)}") from None
        return conn

    def _reason(self, exc: BaseException) -> str:
        """The driver's message on one line, never with the password (drivers do not print it; this makes sure)."""
        text = one_line(exc)
        password = urlsplit(self.url).password if "://" in self.url else None
        return text.replace(password, "***") if password else text

    def open(self) -> None:
        try:
            self.conn  # noqa: B018 - connects and migrates
        except JournalVersionError as exc:
            raise StoreError(f"cannot use the run store {self.where}: {exc}") from None

    @contextlib.contextmanager
    def _transaction(self, conn: Any, exclusive: bool = False) -> Iterator[Any]:
        # Not in pipeline mode: on loopback it cost more per flush than the round trips it saved (bench/README.md).
        with conn.transaction():
            yield conn

    def _lock_run(self, conn: Any, run_id: str) -> None:
        conn.execute(POSTGRES.sql(LOCK_RUN), (run_id,))

    def _write(self) -> None:
        self.flush()

    def flush(self) -> None:
        """As SQLJournal's; rows alone (what most barriers have) are one statement, committed on its own."""
        if self._sql or not self._rows:
            super().flush()
            return
        rows, self._rows = self._rows, []
        try:
            self._insert_events(self.conn, rows)
        except BaseException:
            self._rows[:0] = rows
            raise
