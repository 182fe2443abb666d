"""A runnable's `budget = { usd = 2.00, tokens = ..., model_calls = ..., on_exceeded = pause }` ⇄ its record.

What the compiler checks a `budget` attribute into, the graph carries on a
runnable's record (`Runnable.budget`), and the runtime enforces
(src/plait/runtime/budget.py). `--budget usd=5` on `plait run` and `plait
resume` (and a studio's raise) is read by `Budget.with_items`, so a budget
written in a spec and one given on a command line mean the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .record import Record, record

__all__ = ["BUDGET_KEYS", "Budget", "ON_EXCEEDED", "UNPRICED"]

#: What a budget's `on_exceeded` may say: stop the run for a person, who may raise it on resume, or fail it.
ON_EXCEEDED = ("pause", "fail")
#: What `unpriced` may say: `deny` (the default: a USD budget over a model with no price is a compile error),
#: or `allow` (its calls count in tokens and calls but add nothing in USD).
UNPRICED = ("deny", "allow")
#: The keys a budget may have, with the doc line completion and `plait explain` show.
BUDGET_KEYS: dict[str, str] = {
    "usd": "the most USD its model calls may cost (priced from plait.lock or the model's `price`)",
    "tokens": "the most tokens (input and output together) its model calls may use",
    "model_calls": "the most model calls it may make",
    "on_exceeded": "`pause` (default: the run stops for a person, who may raise it on resume) or `fail`",
    "unpriced": "`allow`: a model with no price counts in tokens and calls only (default: an error)",
}


@record
class Budget(Record):
    """Limits on the model calls of one runnable's execution, nested runnables included; None: no limit."""

    usd: float | None = None
    tokens: int | None = None
    model_calls: int | None = None
    on_exceeded: str = "pause"
    unpriced: str = "deny"

    @property
    def limited(self) -> bool:
        return self.usd is not None or self.tokens is not None or self.model_calls is not None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key in ("usd", "tokens", "model_calls"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        out["on_exceeded"] = self.on_exceeded
        out["unpriced"] = self.unpriced
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Budget | None:
        if not data:
            return None
        return cls().with_items(data)

    def with_items(self, items: Mapping[str, Any]) -> Budget:
        """This budget with `items` (`{"usd": "5"}` from a command line, or JSON values) replacing its own;
        ValueError naming the first key or value that is wrong."""
        values: dict[str, Any] = {k: getattr(self, k) for k in BUDGET_KEYS}
        for key, raw in items.items():
            if key not in BUDGET_KEYS:
                raise ValueError(f"`{key}` is not a budget key; expected one of {', '.join(BUDGET_KEYS)}")
            values[key] = _value(key, raw)
        return Budget(**values)


def _value(key: str, raw: Any) -> Any:
    if key in ("on_exceeded", "unpriced"):
        choices = ON_EXCEEDED if key == "on_exceeded" else UNPRICED
        if raw not in choices:
            raise ValueError(f"budget `{key}` must be one of {', '.join(choices)}, not `{raw}`")
        return raw
    if raw is None or raw == "none":
        return None  # `--budget tokens=none` lifts a limit
    whole = key != "usd"
    try:
        number = (int(raw) if whole else float(raw)) if isinstance(raw, str) else raw
    except ValueError:
        number = None
    if isinstance(number, bool) or not isinstance(number, int | float) or (whole and not isinstance(number, int)):
        kind = "a whole number" if whole else "a number"
        raise ValueError(f"budget `{key}` must be {kind}, not `{raw}`") from None
    if number < 0 or number != number or number == float("inf"):
        raise ValueError(f"budget `{key}` must be at least 0, not `{raw}`")
    return float(number) if not whole else number
