"""A `{{ path }}` template and its values → text.

Paths: `input`, `input.<branch>` (a parallel's record), `state.<key>`, or a
tool parameter name. `\\{{` writes literal braces. Records and lists render as
JSON, so `{{input}}` after a parallel is the JSON of the record.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

__all__ = ["as_text", "render"]

_TOKEN = re.compile(r"\\\{\{|\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*\}\}")


def as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False)


def render(
    template: str,
    *,
    input: Any = None,
    state: dict[str, Any] | None = None,
    params: dict[str, Any] | None = None,
    quote: Callable[[str], str] | None = None,
    strict: bool = True,
) -> str:
    """Fill a template; `quote` escapes each value (URL-encoding for an http tool's URL).

    Not `strict` (system prompts, whose state may not be set yet): a path that
    does not resolve is left as written instead of raising.
    """
    if "{{" not in template:
        return template
    if template == "{{input}}":  # the default prompt of a step and a consolidate's task
        return as_text(input)

    def fill(match: re.Match[str]) -> str:
        path = match.group(1)
        if path is None:
            return "{{"
        head, *rest = path.split(".")
        if head == "input":
            value: Any = input
            if rest and isinstance(value, str):
                value = _maybe_record(value)
        elif head == "state":
            value = state or {}
        elif params is not None and head in params:
            value = params[head]
        else:
            return _unresolved(match, path, strict)
        for key in rest:
            if not isinstance(value, dict) or key not in value:
                return _unresolved(match, path, strict)
            value = value[key]
        text = as_text(value)
        return quote(text) if quote else text

    return _TOKEN.sub(fill, template)


def _unresolved(match: re.Match[str], path: str, strict: bool) -> str:
    if strict:
        raise KeyError(f"template path `{path}` does not resolve")
    return match.group(0)


def _maybe_record(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text
