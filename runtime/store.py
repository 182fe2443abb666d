"""A run's snapshot → a JSON file under `.plait/runs/` beside the spec, and back.

Written atomically (temp file, then rename) at every stop, including failures
and interrupts, so a run can always be inspected and resumed.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["RunStore"]


class RunStore:
    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root) / ".plait" / "runs"

    def path(self, run_id: str) -> Path:
        return self.root / f"{run_id}.json"

    def save(self, run_id: str, snapshot: dict[str, Any]) -> Path:
        self.root.mkdir(parents=True, exist_ok=True)
        target = self.path(run_id)
        fd, tmp = tempfile.mkstemp(prefix=f".{run_id}.", suffix=".tmp", dir=self.root)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(snapshot, fh, ensure_ascii=False, default=str)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return target

    def load(self, run_id: str) -> dict[str, Any]:
        path = self.path(run_id)
        try:
            with open(path, encoding="utf-8") as fh:
                return json.load(fh)
        except FileNotFoundError:
            raise KeyError(f"no stored run `{run_id}` in {self.root}") from None

    def latest(self) -> str | None:
        runs = sorted(self.root.glob("*.json"), key=lambda p: p.stat().st_mtime)
        return runs[-1].stem if runs else None
