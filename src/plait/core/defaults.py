"""A run's limits that belong to no declaration → named constants: the cap on a run's input.

Every attribute's default is declared once, on its kind's record
(src/plait/core/kinds/): the compiler, the graph and the runtime all read the
record, so no second name for it is kept here.
"""

from __future__ import annotations

__all__ = ["MAX_INPUT_BYTES"]

#: a run's input (`--input`, a batch line): its size at most, in bytes of UTF-8 (larger is refused, with this number).
MAX_INPUT_BYTES = 16 * 1024 * 1024
