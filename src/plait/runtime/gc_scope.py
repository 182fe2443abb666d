"""Runs in flight → a higher cyclic-GC threshold: the collector waits for more allocations before it collects.

Every model call allocates short-lived objects (request, messages, records).
At the default threshold (700) the collector runs every few calls, and its
older-generation passes walk every live history of every in-flight run: about
a quarter of the CPU per call with 1,000 concurrent runs. Reference counting
frees nearly all of these objects anyway; cycles are still collected, in larger
and rarer batches (the youngest generation every 50,000 net allocations instead
of 700, the middle one every 1,000,000). The setting is process-wide, so it is counted: the first run
to start raises it, the last to finish puts back what was there, unless someone
changed it in between (then theirs is kept).

A host that wants its own GC settings left alone sets `PLAIT_GC=keep` in the
environment (read at import) or `plait.runtime.gc_scope.enabled = False`.
Measured in bench/README.md ("relaxed GC"): collection time per model call with
1,000 runs in flight fell from about 28 µs to about 9 µs. docs/api.md documents it.
"""

from __future__ import annotations

import gc
import os
import threading
from contextlib import contextmanager
from typing import Iterator

__all__ = ["RUN_THRESHOLDS", "enabled", "relaxed_gc"]

#: False leaves the host's GC thresholds alone while runs are in flight.
enabled = os.environ.get("PLAIT_GC", "").strip().lower() != "keep"

#: Each generation's threshold while runs are in flight (a higher one already set is kept).
RUN_THRESHOLDS = (50_000, 20, 10)

_lock = threading.Lock()
_active = 0
_saved: tuple[int, int, int] | None = None
_ours: tuple[int, int, int] | None = None


@contextmanager
def relaxed_gc() -> Iterator[None]:
    global _active, _saved, _ours
    if not enabled:
        yield
        return
    with _lock:
        _active += 1
        if _active == 1:
            _saved = gc.get_threshold()
            if _saved[0] > 0:  # 0 means the collector is off: leave it off
                gc.set_threshold(*(max(mine, theirs) for mine, theirs in zip(RUN_THRESHOLDS, _saved)))
            _ours = gc.get_threshold()
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0:
                if gc.get_threshold() == _ours and _saved is not None:
                    gc.set_threshold(*_saved)
                _saved = _ours = None
