"""A USD amount → how people read it: `$0.0123`, and a sub-cent amount as digits, never an exponent."""

from __future__ import annotations

import math

__all__ = ["usd"]


def usd(amount: float) -> str:
    """`$0.0123`; under a hundredth of a cent, two significant digits (`$0.000052`, not `$5.2e-05`)."""
    if amount <= 0 or amount >= 0.0001:
        return f"${amount:.4f}"
    places = 1 - math.floor(math.log10(amount))
    return f"${amount:.{places}f}"
