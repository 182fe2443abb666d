"""A run's input (text or JSON) and the spec's `input` block → the validated input record, or why it does not fit.

Undeclared `input`: anything goes, as in 0.1. Declared: a JSON object must fit
the block (unknown fields are refused, with the nearest declared name); plain
text is accepted when the block has exactly one string field, and becomes that
field. Absent optional fields become null and fields with a default get it.
"""

from __future__ import annotations

import difflib
import json
from typing import Any

from .errors import AgentError
from .records import complete, problems

__all__ = ["check_input"]


def _text_field(schema: dict[str, Any]) -> str | None:
    properties = schema.get("properties") or {}
    if len(properties) == 1:
        name, sub = next(iter(properties.items()))
        if isinstance(sub, dict) and sub.get("type") == "string":
            return name
    return None


def check_input(value: Any, schema: dict[str, Any] | None) -> Any:
    """The input the run starts with; AgentError `input_invalid` naming the field that does not fit."""
    if schema is None:
        return value
    if isinstance(value, str):
        stripped = value.strip()
        parsed: Any = None
        if stripped[:1] == "{":
            try:
                parsed = json.loads(stripped)
            except ValueError as exc:
                raise AgentError("input_invalid", f"the input looks like JSON but does not parse: {exc}") from None
        if isinstance(parsed, dict):
            value = parsed
        else:
            field = _text_field(schema)
            if field is None:
                names = ", ".join(f"`{n}`" for n in (schema.get("properties") or {}))
                raise AgentError(
                    "input_invalid", f"the input is text, but `input` declares {names}: pass a JSON object"
                )
            value = {field: value}
    if not isinstance(value, dict):
        raise AgentError("input_invalid", f"the input must be a JSON object, got {json.dumps(value, default=str)}")
    declared = schema.get("properties") or {}
    for name in value:
        if name not in declared:
            near = difflib.get_close_matches(name, list(declared), n=1)
            hint = (
                f"; did you mean `{near[0]}`?"
                if near
                else f"; `input` declares {', '.join(f'`{n}`' for n in declared)}"
            )
            raise AgentError("input_invalid", f"the input has a field `{name}` that `input` does not declare{hint}")
    found = problems(value, schema)
    if found:
        raise AgentError("input_invalid", f"the input does not fit the `input` block: {'; '.join(found)}")
    return complete(value, schema)
