"""The journal's SQL → the text each database runs: every difference between SQLite and PostgreSQL is here.

Statements are written once, with `?` placeholders and SQL both databases
accept (upserts are `ON CONFLICT`, SQLite 3.24+). A dialect turns them into its
own text: PostgreSQL's psycopg takes `%s` placeholders, and its REAL is a 4-byte
float (a timestamp would lose its seconds), so the schema's REAL columns become
DOUBLE PRECISION. Only the event insert is written twice: SQLite runs it once
per row (one numbered parameter twice), PostgreSQL once for all the rows, a
column per array (`unnest`): one round trip to the server per barrier.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["POSTGRES", "SQLITE", "Dialect"]

# A row may come in twice (SQLite: read from a live process's segment, then committed by it); one whose run was
# deleted meanwhile is dropped. Parameters: (run_id, seq, kind, key, at, data).
_INSERT_EVENT_SQLITE = (
    "INSERT OR IGNORE INTO events (run_id, seq, kind, key, at, data) SELECT ?1, ?2, ?3, ?4, ?5, ?6 "
    "WHERE EXISTS (SELECT 1 FROM runs WHERE id = ?1)"
)
#: PostgreSQL: every buffered row in one statement (one round trip, atomic on its own): a column per array.
_INSERT_EVENTS_POSTGRES = (
    "INSERT INTO events (run_id, seq, kind, key, at, data) SELECT t.r, t.s, t.k, t.y, t.a, t.d "
    "FROM unnest(%s::text[], %s::integer[], %s::text[], %s::text[], %s::double precision[], %s::text[]) "
    "AS t(r, s, k, y, a, d) WHERE EXISTS (SELECT 1 FROM runs WHERE id = t.r) ON CONFLICT DO NOTHING"
)


@dataclass(frozen=True)
class Dialect:
    name: str
    placeholder: str
    insert_event: str
    #: The insert takes the rows as one array per column (one statement), not one execution per row.
    columnar: bool
    _cache: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    def sql(self, statement: str) -> str:
        """`statement` (with `?` placeholders) in this dialect; translated once per statement."""
        text = self._cache.get(statement)
        if text is None:
            text = statement if self.placeholder == "?" else statement.replace("?", self.placeholder)
            if self.name == "postgresql":
                text = re.sub(r"\bREAL\b", "DOUBLE PRECISION", text)
            self._cache[statement] = text
        return text


SQLITE = Dialect("sqlite", "?", _INSERT_EVENT_SQLITE, columnar=False)
POSTGRES = Dialect("postgresql", "%s", _INSERT_EVENTS_POSTGRES, columnar=True)

# -- statements both dialects run -------------------------------------------------------
#
# The statements an admission and a stop buffer (`later`) may be applied more than once and late: SQLite's
# journal also writes them to its segment, and whoever moves a segment into the tables applies them again
# (segments are read while their writer lives). So each is harmless to repeat and never undoes what came after:
# an admission never replaces a run or a lease, a stop is applied only to a run not updated since (a resume by
# another process updates it), a release deletes only its own lease.

INSERT_RUN = (
    "INSERT INTO runs (id, entry, spec, input, status, started, updated) VALUES (?, ?, ?, ?, 'running', ?, ?) "
    "ON CONFLICT (id) DO NOTHING"
)
ADMIT_LEASE = (
    "INSERT INTO leases (run_id, owner, pid, host, expires) VALUES (?, ?, ?, ?, ?) ON CONFLICT (run_id) DO NOTHING"
)
UPSERT_LEASE = (
    "INSERT INTO leases (run_id, owner, pid, host, expires) VALUES (?, ?, ?, ?, ?) "
    "ON CONFLICT (run_id) DO UPDATE SET owner = excluded.owner, pid = excluded.pid, host = excluded.host, "
    "expires = excluded.expires"
)
SELECT_LEASE = "SELECT owner, pid, host, expires FROM leases WHERE run_id = ?"
RUN_RUNNING = "UPDATE runs SET status = 'running', updated = ? WHERE id = ?"
RUN_STOPPED = (
    "UPDATE runs SET status = ?, updated = ?, steps = ?, input_tokens = ?, output_tokens = ?, snapshot = ? "
    "WHERE id = ? AND updated <= ?"
)
#: A stopped run's cost, beside its stop (a statement of its own, so a segment line an older plait wrote for
#: RUN_STOPPED still replays as it was written).
RUN_COSTED = "UPDATE runs SET cost_usd = ? WHERE id = ? AND updated <= ?"
#: A run brought in from elsewhere (an export, plait 0.1's stored file, a snapshot): its status and result.
RUN_IMPORTED = "UPDATE runs SET status = ?, snapshot = ? WHERE id = ?"
RELEASE_LEASE = "DELETE FROM leases WHERE run_id = ? AND owner = ?"
RENEW_LEASES = "UPDATE leases SET expires = ? WHERE owner = ?"
SELECT_EVENTS = "SELECT seq, kind, key, at, data FROM events WHERE run_id = ? ORDER BY seq"
#: A run's model replies alone (what its totals are counted from while it has no stopped row), not its other rows.
SELECT_REPLIES = "SELECT data FROM events WHERE run_id = ? AND kind = 'model_reply' ORDER BY seq"
DELETE_EVENTS = "DELETE FROM events WHERE run_id = ?"
DELETE_LEASE = "DELETE FROM leases WHERE run_id = ?"
DELETE_RUN = "DELETE FROM runs WHERE id = ?"
#: A run's spec, pinned: its sources stored once per digest, and the run's row naming the digest.
INSERT_SPEC = "INSERT INTO specs (digest, source) VALUES (?, ?) ON CONFLICT (digest) DO NOTHING"
PIN_RUN = "UPDATE runs SET spec_digest = ? WHERE id = ?"
SELECT_PIN = "SELECT r.spec_digest, s.source FROM runs r LEFT JOIN specs s ON s.digest = r.spec_digest WHERE r.id = ?"
#: The buffered statements by name: a segment line names one (never carries SQL text).
DEFERRED = {
    "run": INSERT_RUN,
    "lease": ADMIT_LEASE,
    "spec": INSERT_SPEC,
    "pin": PIN_RUN,
    "stopped": RUN_STOPPED,
    "costed": RUN_COSTED,
    "release": RELEASE_LEASE,
}
DEFERRED_NAMES = {sql: name for name, sql in DEFERRED.items()}
#: PostgreSQL: taken inside a lease's transaction, so two processes acquiring one run take turns (see postgres.py).
LOCK_RUN = "SELECT id FROM runs WHERE id = ? FOR UPDATE"
