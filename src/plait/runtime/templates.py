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

import re
from functools import lru_cache
from typing import Any, Callable

from plait.core.expr import as_text

from .scope import MISSING, as_record

__all__ = ["as_text", "render"]

# A plain path (group 1) keeps its own fast reading; anything else between braces is an expression (group 2).
_TOKEN = re.compile(r"\\\{\{|\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*\}\}|\{\{(.*?)\}\}", re.S)


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
    if strict and "\r" not in template:
        plan = _whole(template)
        if plan is not None:  # it holds an expression: one Jinja template for all of it, compiled once per text
            return _render_whole(plan, input, state, params, quote, scope)

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


def _whole(template: str) -> tuple[Any, tuple[str, ...]] | None:
    return _compiled_whole(template) if "{{" in template else None


@lru_cache(maxsize=2048)
def _compiled_whole(template: str) -> tuple[Any, tuple[str, ...]] | None:
    """(the template as one compiled Jinja template, the names it reads), or None when it has plain paths only.

    A plain path becomes a call that reads it exactly as `fill` does (`__path`), an expression is written as
    it is, and literal text is kept as Jinja template data (its `{%` and `{#` are no syntax there)."""
    from plait.core.expr import compiled, whole_environment

    source: list[str] = []
    names: dict[str, None] = {}
    expressions = False
    last = 0
    for match in _TOKEN.finditer(template):
        source.append(template[last : match.start()].replace("{{", '{{ "{{" }}'))
        last = match.end()
        path, expression = match.group(1), match.group(2)
        if path is not None:
            parts = path.split(".")
            names[parts[0]] = None
            source.append("{{ __q(__path(__v, %r, %r)) }}" % (path, tuple(parts)))
        elif expression is not None:
            expressions = True
            try:
                for name in sorted(compiled(expression)[1]):
                    names[name] = None
            except Exception:
                return None  # a syntax error: the placeholder-by-placeholder reading reports it
            source.append("{{ __q(%s) }}" % expression)
        else:
            source.append('{{ "{{" }}')
    if not expressions:
        return None
    source.append(template[last:].replace("{{", '{{ "{{" }}'))
    try:
        return whole_environment().from_string("".join(source)), tuple(names)
    except Exception:
        return None


def _read_path(values: dict[str, Any], path: str, parts: tuple[str, ...]) -> Any:
    value = values[parts[0]]
    for key in parts[1:]:
        if value is None:  # an optional record left out: its fields read as empty too
            break
        if isinstance(value, str):
            value = as_record(value)
        if not isinstance(value, dict) or key not in value:
            raise KeyError(f"template path `{path}` does not resolve")
        value = value[key]
    return value


def _render_whole(
    plan: tuple[Any, tuple[str, ...]],
    input: Any,
    state: dict[str, Any] | None,
    params: dict[str, Any] | None,
    quote: Callable[[str], str] | None,
    scope: Callable[[str], Any] | None,
) -> str:
    from jinja2 import Undefined

    from .errors import AgentError

    compiled_template, names = plan
    # Each name it reads → its value here; KeyError naming the first that does not resolve.
    values = {name: _value(name, input, state, params, scope) for name in names}

    def out(value: Any) -> str:
        text = "" if isinstance(value, Undefined) else as_text(value)
        return quote(text) if quote else text

    try:
        return compiled_template.render(values, __v=values, __q=out, __path=_read_path)
    except KeyError:
        raise
    except Exception as exc:  # a type the checker could not see (an undeclared input), or the sandbox refusing
        raise AgentError("expression_failed", f"an expression of the template failed: {exc}") from None


def _evaluate(
    text: str,
    input: Any,
    state: dict[str, Any] | None,
    params: dict[str, Any] | None,
    scope: Callable[[str], Any] | None,
) -> Any:
    """The text an expression renders as, or MISSING when a name it reads is not there."""
    from plait.core.expr import ExprFailed, compiled, evaluate

    from .errors import AgentError

    try:
        compiled(text)
    except Exception as exc:  # the checker reports a syntax error first; a spec built by hand may still hold one
        raise AgentError("expression_failed", f"`{{{{{text.strip()}}}}}` is not an expression: {exc}") from None
    try:
        value = evaluate(text, lambda name: _value(name, input, state, params, scope))
    except KeyError:
        return MISSING
    except ExprFailed as exc:
        raise AgentError("expression_failed", f"`{{{{{text.strip()}}}}}` failed: {exc}") from None
    return as_text(value)


def _unresolved(match: re.Match[str], path: str, strict: bool) -> str:
    if strict:
        raise KeyError(f"template path `{path}` does not resolve")
    return match.group(0)


def _value(
    name: str,
    input: Any,
    state: dict[str, Any] | None,
    params: dict[str, Any] | None,
    scope: Callable[[str], Any] | None,
) -> Any:
    """One name's value here; KeyError when it does not resolve."""
    if name == "input":
        return input
    if name == "state":
        return state or {}
    if params is not None and name in params:
        return params[name]
    if scope is not None and (value := scope(name)) is not MISSING:
        return value
    raise KeyError(f"template path `{name}` does not resolve")
