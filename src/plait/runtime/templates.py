"""A `{{ path }}` template and its values → text.

Paths: `input`, `input.<branch>` (a parallel's record), `state.<key>`, or a
tool parameter name; with a `scope` (the run's, see scope.py) also
`run.input...`, `NAME...` (an earlier runnable's output), `loop...` and
`map...`. `\\{{` writes literal braces. Records and lists render as JSON, so
`{{input}}` after a parallel is the JSON of the record; null (an optional
field left out, `loop.last` on the first iteration) renders as empty text.

Anything else between the braces is an expression (src/plait/core/expr.py:
`{{ loop.last.feedback | default("none yet") }}`, `{{ len(docs) }}`), evaluated
in a sandboxed Jinja2 environment; jinja2 is imported only by a template that
holds one, and each expression is compiled once per text.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

from .scope import MISSING, as_record

__all__ = ["as_text", "render"]

# A plain path (group 1) keeps its own fast reading; anything else between braces is an expression (group 2).
_TOKEN = re.compile(r"\\\{\{|\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*\}\}|\{\{(.*?)\}\}", re.S)


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
    scope: Callable[[str], Any] | None = None,
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
            expression = match.group(2)
            if expression is None:
                return "{{"
            found = _evaluate(expression, input, state, params, scope)
            if found is MISSING:
                return _unresolved(match, expression.strip(), strict)
            return quote(found) if quote else found
        head, *rest = path.split(".")
        if head == "input":
            value: Any = input
        elif head == "state":
            value = state or {}
        elif params is not None and head in params:
            value = params[head]
        elif scope is not None and (value := scope(head)) is not MISSING:
            pass
        else:
            return _unresolved(match, path, strict)
        for key in rest:
            if value is None:  # an optional record left out: its fields read as empty too
                break
            if isinstance(value, str):
                value = as_record(value)
            if not isinstance(value, dict) or key not in value:
                return _unresolved(match, path, strict)
            value = value[key]
        text = as_text(value)
        return quote(text) if quote else text

    return _TOKEN.sub(fill, template)


def _evaluate(
    text: str,
    input: Any,
    state: dict[str, Any] | None,
    params: dict[str, Any] | None,
    scope: Callable[[str], Any] | None,
) -> Any:
    """The text an expression renders as, or MISSING when a name it reads is not there."""
    from jinja2 import Undefined

    from plait.core.expr import compiled

    from .errors import AgentError

    try:
        function, names = compiled(text)
    except Exception as exc:  # the checker reports a syntax error first; a spec built by hand may still hold one
        raise AgentError("expression_failed", f"`{{{{{text.strip()}}}}}` is not an expression: {exc}") from None
    values: dict[str, Any] = {}
    for name in names:
        if name == "input":
            values[name] = input
        elif name == "state":
            values[name] = state or {}
        elif params is not None and name in params:
            values[name] = params[name]
        elif scope is not None and (value := scope(name)) is not MISSING:
            values[name] = value
        else:
            return MISSING
    try:
        value = function(**values)
        if isinstance(value, Undefined):
            return ""
    except Exception as exc:  # a type the checker could not see (an undeclared input), or the sandbox refusing
        raise AgentError("expression_failed", f"`{{{{{text.strip()}}}}}` failed: {exc}") from None
    return as_text(value)


def _unresolved(match: re.Match[str], path: str, strict: bool) -> str:
    if strict:
        raise KeyError(f"template path `{path}` does not resolve")
    return match.group(0)
