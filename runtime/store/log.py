"""Journal rows → appended to this process's segment file (`.plait/journal.db-log/<pid>-<token>.jsonl`), and read back.

The cheap half of durability. Appending a line and returning from write(2)
puts it in the operating system's hands: it survives the process being
killed, as a WAL commit with `synchronous = NORMAL` does, at a fraction of a
commit's cost. Rows move into the SQLite tables in batches (at a stop, before
any read, and when a segment grows large); whoever opens the journal next
moves in what a dead process left behind, then deletes its segment.

A line is the JSON header `[run_id, seq, kind, key, at]`, a tab, and the row's
JSON data (JSON text never holds a raw tab or newline). A line with seq 0 is
not a history row but a table statement (kind `~` and its name in
dialect.DEFERRED: an admission, a stop), its data the statement's parameters. A last line without
its newline was cut off mid-write and is ignored.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

__all__ = ["Segment", "line", "read", "segments"]

Row = tuple[str, int, str, str | None, float, str]

_quote = json.encoder.encode_basestring  # the C string encoder: no encoder object built per row


def line(run_id: str, seq: int, kind: str, key: str | None, at: float, data: str) -> str:
    return f"[{_quote(run_id)},{seq},{_quote(kind)},{'null' if key is None else _quote(key)},{at!r}]\t{data}\n"


class Segment:
    """This process's append-only file; opened on the first write."""

    def __init__(self, directory: Path, name: str) -> None:
        self.path = directory / f"{name}.jsonl"
        self._fd: int | None = None

    def write(self, text: str) -> None:
        fd = self._fd
        if fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        data = text.encode()
        while data:
            data = data[os.write(fd, data) :]

    def truncate(self) -> None:
        """Everything written is in the tables now: start the file again (appends go to its new end)."""
        if self._fd is not None:
            os.ftruncate(self._fd, 0)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
            try:
                if self.path.stat().st_size == 0:
                    self.path.unlink()
            except OSError:
                pass


def read(path: Path) -> list[Row]:
    """Every whole row of a segment (another process may be appending to it, or may have died mid-line)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    rows: list[Row] = []
    for entry in text.split("\n")[:-1]:  # the piece after the last newline is not a whole line
        head, sep, data = entry.partition("\t")
        if not sep:
            continue
        try:
            run_id, seq, kind, key, at = json.loads(head)
        except ValueError:
            continue
        rows.append((run_id, seq, kind, key, at, data))
    return rows


def segments(directory: Path) -> list[tuple[Path, int]]:
    """(path, writer pid) of every segment in the directory."""
    if not directory.is_dir():
        return []
    out = []
    for path in sorted(directory.glob("*.jsonl")):
        pid, _, _ = path.stem.partition("-")
        if pid.isdigit():
            out.append((path, int(pid)))
    return out
