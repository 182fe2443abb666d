"""A journal → what in it cannot be read (each with its file), and, on request, that damage moved aside.

`plait runs doctor` runs `check`; `--repair` runs `repair`. Damage is what a
reader would trip on: a segment line that is not a row (log.scan), a run whose
stored input or snapshot is not JSON, a history row whose data is not JSON,
and for SQLite what `PRAGMA integrity_check` finds. Repair never deletes user
data: a damaged segment (its good rows already taken in) is moved to the
quarantine folder beside the journal, and a damaged value is copied there
(one JSON line per value, with its table, run and row) before it is replaced
by a marker that says where it went. The run it belonged to is then readable
(`runs`, `trace`, `export`) and refuses to resume, as replaying around a lost
row could repeat an effect.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from .base import SQLJournal, alive
from .private import private_dir

__all__ = ["Finding", "check", "quarantined", "repair"]

#: The key of the marker a repaired value becomes: `{"quarantined": "<file>"}`.
MARKER = "quarantined"


@dataclass
class Finding:
    """One problem: where (file, and run/row when known), what, and whether `--repair` can move it aside."""

    where: str
    what: str
    run_id: str | None = None
    repairable: bool = True
    #: What repair needs: ("segment", path) | ("input"|"snapshot", run_id) | ("event", run_id, seq).
    target: tuple[Any, ...] = field(default=(), repr=False)

    def __str__(self) -> str:
        run = f" (run {self.run_id})" if self.run_id else ""
        return f"{self.where}{run}: {self.what}"


def quarantined(data: Any) -> bool:
    """A value a repair replaced with its marker."""
    return isinstance(data, dict) and set(data) == {MARKER}


def check(journal: SQLJournal) -> list[Finding]:
    """Every problem in the journal (the journal is open)."""
    found: list[Finding] = []
    found += _file_checks(journal)
    damage = getattr(journal, "damage", {})
    for path, lines in damage.items():
        for d in lines:
            found.append(Finding(f"{path}: line {d.line}", d.reason, d.run_id, True, ("segment", path)))
    found += list(_row_checks(journal))
    return found


def _file_checks(journal: SQLJournal) -> list[Finding]:
    if journal.dialect.name != "sqlite":
        return []
    rows = journal.conn.execute("PRAGMA integrity_check").fetchall()
    bad = [r[0] for r in rows if r[0] != "ok"]
    advice = (
        "the database file is damaged: copy it aside, then `sqlite3 journal.db .recover | sqlite3 recovered.db` "
        "keeps what can be read"
    )
    return [Finding(journal.where, f"{advice} ({b})", repairable=False) for b in bad[:20]]


def _row_checks(journal: SQLJournal) -> Iterator[Finding]:
    conn, sql = journal.conn, journal.dialect.sql
    for run_id, value, snapshot in conn.execute(sql("SELECT id, input, snapshot FROM runs ORDER BY started, id")):
        if not _json(value):
            yield Finding(journal.where, "its stored input is not JSON", run_id, True, ("input", run_id))
        if snapshot is not None and not isinstance(_load(snapshot), dict):
            yield Finding(journal.where, "its stored snapshot is not a JSON object", run_id, True, ("snapshot", run_id))
    for run_id, seq, kind, data in conn.execute(sql("SELECT run_id, seq, kind, data FROM events ORDER BY run_id, seq")):
        if not _json(data):
            yield Finding(
                f"{journal.where}: row {seq}",
                f"the data of its `{kind}` row is not JSON",
                run_id,
                True,
                ("event", run_id, seq),
            )


_BAD = object()


def _load(text: Any) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return _BAD


def _json(text: Any) -> bool:
    return _load(text) is not _BAD


def repair(journal: SQLJournal, findings: list[Finding], folder: Path) -> list[str]:
    """Move every repairable finding aside (copies under `folder`); what was done, one line each."""
    done: list[str] = []
    segments = {f.target[1] for f in findings if f.target[:1] == ("segment",)}
    for path in sorted(segments):
        pid = int(path.stem.partition("-")[0]) if path.stem.partition("-")[0].isdigit() else 0
        if pid and alive(pid):
            done.append(f"{path}: left in place, process {pid} is still writing it (repair again once it stops)")
            continue
        moved = journal.quarantine(path)  # type: ignore[attr-defined]
        done.append(f"{path}: moved to {moved} (its readable rows are in the journal)")
    values = [f for f in findings if f.target[:1] in (("input",), ("snapshot",), ("event",))]
    if not values:
        return done
    private_dir(folder)
    copy = folder / f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-rows.jsonl"
    marker = json.dumps({MARKER: str(copy)})
    conn, sql = journal.conn, journal.dialect.sql
    handle = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)  # owner-only, as the journal it came from
    with open(handle, "a", encoding="utf-8") as out, journal._transaction(conn, exclusive=True):
        for f in values:
            kind, run_id, *rest = f.target
            if kind == "event":
                (raw,) = conn.execute(
                    sql("SELECT data FROM events WHERE run_id = ? AND seq = ?"), (run_id, rest[0])
                ).fetchone()
                conn.execute(sql("UPDATE events SET data = ? WHERE run_id = ? AND seq = ?"), (marker, run_id, rest[0]))
            else:
                (raw,) = conn.execute(sql(f"SELECT {kind} FROM runs WHERE id = ?"), (run_id,)).fetchone()
                conn.execute(sql(f"UPDATE runs SET {kind} = ? WHERE id = ?"), (marker, run_id))
            out.write(
                json.dumps(
                    {
                        "table": "events" if kind == "event" else "runs",
                        "column": kind,
                        "run": run_id,
                        "seq": rest[0] if rest else None,
                        "value": raw,
                    }
                )
                + "\n"
            )
            done.append(f"{f}: copied to {copy}")
        out.flush()
        os.fsync(out.fileno())  # the copy is on disk before the transaction that replaces the value commits
    return done
