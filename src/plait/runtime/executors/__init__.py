"""Where a batch's runs execute → the names `plait batch --executor` takes; each executor is a module here.

`process` is the in-process executor (src/plait/runtime/batch.py: one loop, bounded
concurrency); `ray` (src/plait/runtime/executors/ray.py, the `plait[ray]` extra) hosts
the same runs on a small pool of async Ray actors. Nothing here imports Ray:
only choosing `ray` does.
"""

from __future__ import annotations

__all__ = ["EXECUTORS"]

#: `--executor` choices, the default first.
EXECUTORS = ("process", "ray")
