"""A journaled run → its export (the run's row and every history row, as JSON); any stored form of a run → journal rows.

The journal is the one place a run is stored: its history rows are the run,
and the runs table is their index (status, counters, the last result). An
export is made from those rows when it is asked for (`plait runs export`), so
it can never disagree with them, and it holds everything a resume needs:
`Engine.restore(export)` puts the rows into another journal as they were and
resumes from them exactly as from the journal they came from.

Older forms of a run come in the same way: a version-1 or -2 snapshot (plait
0.1's `.plait/runs/<id>.json`, `Run.snapshot()`, an export of plait 0.2.0) is
one row, `base`, which a resume starts from before replaying what followed.

An export carries the run's pin (compiler/pin.py: the sources of the spec it
started with, and their digest) when it has one, so the run imported from it
is pinned to the same spec and a resume under an edited one is checked
(runtime/pinning.py) as it would be where it came from. The field is optional:
an export without it (written before runs were pinned) imports unpinned, and a
plait that does not know it ignores it, so the version stays 3.
"""

from __future__ import annotations

import time
from typing import Any

from .base import Journal
from .snapshot import SNAPSHOT_VERSION, SnapshotError, upgrade

__all__ = ["EXPORT_VERSION", "export", "export_pin", "stored_form"]

#: An export: the run's row and its history rows (version 2 is a snapshot of the run's context, version 1 plait 0.1's).
EXPORT_VERSION = 3


def export(journal: Journal, row: dict[str, Any]) -> dict[str, Any]:
    """The export of the run whose row (`journal.run(id)`) this is: derived from its rows, nothing stored twice."""
    return {
        "version": EXPORT_VERSION,
        "run_id": row["id"],
        "entry": row["entry"],
        "spec": row["spec"],
        "input": row["input"],
        "status": row["status"],
        "result": row["result"],
        "events": list(journal.events(row["id"])),
        **({"pin": {"digest": pin[0], "spec": pin[1]}} if (pin := journal.pinned(row["id"])) and pin[1] else {}),
    }


def export_pin(document: dict[str, Any]) -> tuple[str, str] | None:
    """(digest, sources) an export's run is pinned to; None when it carries no pin (an older export, a snapshot).
    SnapshotError when the pin is not what `export` writes, or its sources do not have its digest (edited by
    hand): importing the run pinned to a spec it did not start with would let a resume go on unchecked."""
    if not isinstance(document, dict) or document.get("version") != EXPORT_VERSION or "pin" not in document:
        return None
    from plait.compiler.pin import digest_of

    pin = document["pin"]
    if not isinstance(pin, dict) or not isinstance(pin.get("digest"), str) or not isinstance(pin.get("spec"), str):
        raise SnapshotError('the run export\'s `pin` is not {"digest", "spec"} as `plait runs export` writes it')
    if digest_of(pin["spec"]) != pin["digest"]:
        raise SnapshotError("the run export's `pin` does not match its spec's sources (was the export edited?)")
    return pin["digest"], pin["spec"]


def stored_form(document: dict[str, Any]) -> tuple[str, str, Any, Any, list[dict[str, Any]]]:
    """(run id, entry, input, result, history rows) of an export or a snapshot of any version; SnapshotError when
    it is neither, or an export row cannot be read (resuming around it could repeat what it recorded)."""
    if not isinstance(document, dict):
        raise SnapshotError("not a run snapshot or export (not a JSON object)")
    if document.get("version") == EXPORT_VERSION:
        rows = document.get("events")
        if not isinstance(rows, list) or not all(_row(r) for r in rows):
            raise SnapshotError("the run export's `events` are not the rows `plait runs export` writes")
        damaged = [r["seq"] for r in rows if r.get("damaged")]
        if damaged:
            raise SnapshotError(f"the run export's rows {', '.join(map(str, damaged))} could not be read when exported")
        return _str(document, "run_id"), _str(document, "entry"), document.get("input"), document.get("result"), rows
    snapshot = upgrade(document)
    if snapshot["version"] != SNAPSHOT_VERSION:
        raise SnapshotError(f"the run snapshot has version {snapshot['version']}, which this plait cannot read")
    base = {"seq": 1, "kind": "base", "key": None, "at": time.time(), "data": snapshot}
    return _str(snapshot, "run_id"), _str(snapshot, "entry"), snapshot.get("input"), snapshot.get("result"), [base]


def _row(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and type(value.get("seq")) is int
        and value["seq"] > 0
        and isinstance(value.get("kind"), str)
        and (value.get("key") is None or isinstance(value.get("key"), str))
        and "data" in value
    )


def _str(document: dict[str, Any], field: str) -> str:
    value = document.get(field)
    if not isinstance(value, str) or not value:
        raise SnapshotError(f"the run snapshot has no `{field}`")
    return value
