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
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import orjson

from .private import private_dir

__all__ = ["Damage", "Segment", "line", "read", "scan", "segments"]

Row = tuple[str, int, str, str | None, float, str]

_quote = json.encoder.encode_basestring  # the C string encoder: no encoder object built per row
_header = orjson.dumps


def line(run_id: str, seq: int, kind: str, key: str | None, at: float, data: str) -> str:
    try:
        # One C call for the header, about a third of the time of three string escapes and a float's repr, for the
        # same values (strings as written, the float's shortest form): every row of a journaled run makes one.
        return f"{_header((run_id, seq, kind, key, at)).decode()}\t{data}\n"
    except TypeError:  # a lone surrogate in a run id, which orjson will not encode
        return f"[{_quote(run_id)},{seq},{_quote(kind)},{'null' if key is None else _quote(key)},{at!r}]\t{data}\n"


class Segment:
    """This process's append-only file; opened on the first write."""

    def __init__(self, directory: Path, name: str) -> None:
        self.path = directory / f"{name}.jsonl"
        self._fd: int | None = None

    def write(self, text: str) -> None:
        fd = self._fd
        if fd is None:
            private_dir(self.path.parent)
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


@dataclass(frozen=True)
class Damage:
    """A line of a segment that cannot be a row: where it is and why (its run, when the header names one)."""

    path: Path
    line: int
    reason: str
    run_id: str | None = None

    def __str__(self) -> str:
        run = f" (run {self.run_id})" if self.run_id else ""
        return f"{self.path}: line {self.line}{run}: {self.reason}"


def read(path: Path) -> list[Row]:
    """Every whole, well-formed row of a segment (another process may be appending to it, or may have died mid-line)."""
    return scan(path)[0]


def scan(path: Path, deferred: Mapping[str, int] | None = None) -> tuple[list[Row], list[Damage]]:
    """(rows, damaged lines) of a segment. A line is damaged when it is not `header TAB JSON` with the header's five
    fields of the right types, or (given `deferred`, statement name → parameter count) names a statement that
    does not exist or gives it the wrong parameters. The piece after the last newline was cut off mid-write (the
    writer is appending, or died writing it): not a row, and not damage."""
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except OSError as exc:
        return [], [Damage(path, 0, f"cannot be read: {exc.strerror or exc}")]
    rows: list[Row] = []
    damage: list[Damage] = []
    for number, entry in enumerate(text.split("\n")[:-1], 1):
        head, sep, data = entry.partition("\t")
        try:
            run_id, seq, kind, key, at = json.loads(head)
        except (ValueError, TypeError):
            damage.append(Damage(path, number, "not a journal row (its header is not five JSON values)"))
            continue
        run = run_id if isinstance(run_id, str) else None
        if not (
            sep
            and run is not None
            and type(seq) is int
            and seq >= 0
            and isinstance(kind, str)
            and (key is None or isinstance(key, str))
            and isinstance(at, (int, float))
        ):
            damage.append(Damage(path, number, "not a journal row (a field of its header is missing or mistyped)", run))
            continue
        try:
            value = json.loads(data)
        except ValueError:
            damage.append(Damage(path, number, "its data is not JSON", run or None))
            continue
        if seq == 0 and deferred is not None:
            wanted = deferred.get(kind[1:]) if kind.startswith("~") else None
            if wanted is None:
                damage.append(Damage(path, number, f"names no journal statement (`{kind}`)", run or None))
                continue
            if not (
                isinstance(value, list)
                and len(value) == wanted
                and all(v is None or isinstance(v, (str, int, float)) for v in value)
            ):
                damage.append(
                    Damage(path, number, f"the parameters of `{kind[1:]}` are not {wanted} values", run or None)
                )
                continue
        rows.append((run_id, seq, kind, key, at, data))
    return rows, damage


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
