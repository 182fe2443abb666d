"""A stored run snapshot of any known version → the current version (2); legacy `.plait/runs/<id>.json` files → snapshots.

Version 1 (plait 0.1) kept each agent's resume point as an index into the turn
steps as they were then ordered; version 2 keeps the step's name, so adding or
reordering steps never moves a stored run's resume point.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

__all__ = ["SNAPSHOT_VERSION", "V1_TURN_STEPS", "legacy_snapshot", "upgrade"]

SNAPSHOT_VERSION = 2

#: The turn steps in plait 0.1's order: what a version-1 `resume_at` index points into. Frozen: never edit.
V1_TURN_STEPS = (
    "check_budget",
    "expand_messages",
    "call_model",
    "check_interrupts",
    "run_tools",
    "propagate_state",
    "check_until",
    "loop_boundary",
)


class SnapshotError(ValueError):
    """A snapshot this plait cannot read."""


def upgrade(snapshot: dict[str, Any]) -> dict[str, Any]:
    """A copy of `snapshot` in the current version; the input is left as it was."""
    version = snapshot.get("version", 1)
    if not isinstance(version, int) or version < 1:
        raise SnapshotError(f"not a run snapshot (version {version!r})")
    if version > SNAPSHOT_VERSION:
        raise SnapshotError(
            f"the run snapshot has version {version}, newer than this plait knows ({SNAPSHOT_VERSION}); upgrade plait"
        )
    if version == SNAPSHOT_VERSION:
        return snapshot
    out = copy.deepcopy(snapshot)
    for run in (out.get("context") or {}).get("runs", {}).values():
        index = run.get("resume_at", 0)
        if isinstance(index, int):
            if not 0 <= index < len(V1_TURN_STEPS):
                raise SnapshotError(f"the run snapshot's resume point {index} is not a step of plait 0.1's turn")
            run["resume_at"] = V1_TURN_STEPS[index]
    out["version"] = SNAPSHOT_VERSION
    return out


def legacy_snapshot(project: str | os.PathLike[str], run_id: str) -> dict[str, Any] | None:
    """The snapshot plait 0.1 wrote to `.plait/runs/<id>.json`, or None when there is none."""
    if not run_id or "/" in run_id or "\\" in run_id or run_id.startswith("."):
        return None
    path = Path(project) / ".plait" / "runs" / f"{run_id}.json"
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise SnapshotError(f"cannot read the stored run {path}: {exc}") from None
