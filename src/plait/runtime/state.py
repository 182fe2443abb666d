"""A tool's state updates and the spec's `state` block → the refusal the model reads, or None when they may be written.

Undeclared `state` (0.1): any key may be written. Declared: every key must be
declared and its value fit the key's type; otherwise nothing of the update is
written and the tool's result becomes an error naming the key.
"""

from __future__ import annotations

import difflib
import json
from typing import Any

from .records import problems

__all__ = ["refuse_write"]


def refuse_write(tool: str, updates: dict[str, Any], schema: dict[str, Any] | None) -> str | None:
    if schema is None:
        return None
    declared = schema.get("properties") or {}
    for key, value in updates.items():
        sub = declared.get(key)
        if sub is None:
            near = difflib.get_close_matches(key, list(declared), n=1)
            hint = f" (did you mean `{near[0]}`?)" if near else ""
            names = ", ".join(f"`{n}`" for n in declared) or "none"
            return (
                f"tool `{tool}` tried to write state key `{key}`, which the spec's `state` block does not declare{hint}; "
                f"nothing was written. Declared keys: {names}."
            )
        if value is None and key not in (schema.get("required") or ()):
            continue  # an optional key may be cleared
        found = problems(value, sub)
        if found:
            return (
                f"tool `{tool}` tried to write {json.dumps(value, default=str)} to state key `{key}`, which does not fit its type "
                f"({'; '.join(p.replace('$', key, 1) for p in found)}); nothing was written."
            )
    return None
