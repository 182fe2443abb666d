"""A replies file or list → the next Reply for each request.

A list is consumed in order by every request; an object maps a key (an
agent name the request carries, see server.py, else the requested model id) to
its own list, with `"*"` as the fallback. With `cycle`, a used-up list starts over (for
benchmarks); without it, a request past the end gets a clear error reply.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from plait.core.paths import read_regular

from .reply import Reply

__all__ = ["Script", "ScriptExhausted"]


class ScriptExhausted(LookupError):
    pass


class Script:
    def __init__(self, replies: list[Any] | dict[str, list[Any]] | None = None, *, cycle: bool = False) -> None:
        self._lock = threading.Lock()
        self._cycle = cycle
        self._queues: dict[str, list[Reply]] = {}
        self._positions: dict[str, int] = {}
        self.extend(replies or [])

    @classmethod
    def load(cls, path: str | Path, *, cycle: bool = False) -> "Script":
        # Only a regular file under the cap: /dev/zero or a FIFO is refused, never read or waited on.
        return cls(json.loads(read_regular(Path(path))), cycle=cycle)

    def extend(self, replies: list[Any] | dict[str, list[Any]], key: str = "*") -> None:
        """Queue more replies (from any thread)."""
        groups = replies.items() if isinstance(replies, dict) else [(key, replies)]
        with self._lock:
            for name, items in groups:
                if not isinstance(items, list):
                    raise ValueError(f"replies for `{name}` must be a list")
                queue = self._queues.setdefault(name, [])
                queue += [Reply.from_json(item, len(queue) + i) for i, item in enumerate(items)]

    def clear(self) -> None:
        with self._lock:
            self._queues.clear()
            self._positions.clear()

    def next(self, *keys: str | None) -> Reply:
        with self._lock:
            for key in (*(k for k in keys if k), "*"):
                queue = self._queues.get(key)
                if not queue:
                    continue
                position = self._positions.get(key, 0)
                if position >= len(queue):
                    if not self._cycle:
                        raise ScriptExhausted(f"the script's replies for `{key}` are used up ({len(queue)} given)")
                    position = 0
                self._positions[key] = position + 1
                return queue[position]
        raise ScriptExhausted(f"no scripted reply for {', '.join(k for k in keys if k) or 'this request'}")
