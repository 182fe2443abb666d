"""An expression's text (what a `{{ ... }}` holds when it is more than a dotted path) → its Jinja2 tree, and
the one sandboxed environment the checker and the runtime share.

A template placeholder that is a dotted path (`{{classify.summary}}`) keeps the
meaning it always had and never comes here; anything else between the braces
is a Jinja2 expression (`{{ loop.last.feedback | default("") }}`, `{{ "x" if
n > 3 else "y" }}`, `{{ len(docs) }}`). Only expressions are Jinja: `{%` and
`{#` stay literal text, as they always were (docs/decisions.md).

jinja2 is imported on first use, so a spec with plain paths only never loads
it (`plait check`'s start-up budget). The environment is a
`jinja2.sandbox.SandboxedEnvironment`: no attribute of Python's internals is
reachable; a record's field is read as a key (`reply.verdict` reads
`reply["verdict"]`), and text holding a JSON record reads as that record, as a
plain path does.
"""

from __future__ import annotations

import datetime as _dt
import json
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from jinja2 import nodes
    from jinja2.sandbox import SandboxedEnvironment

__all__ = [
    "ExprSyntaxError",
    "as_record",
    "as_text",
    "compiled",
    "environment",
    "evaluate",
    "ExprFailed",
    "parse",
    "whole_environment",
]


class ExprSyntaxError(Exception):
    """An expression Jinja cannot parse; `message` is Jinja's."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def as_text(value: Any) -> str:
    """What a value renders as: text as itself, null as nothing, anything else as JSON (as a plain path does)."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False)


def _absent(value: Any) -> bool:
    from jinja2 import Undefined

    return value is None or isinstance(value, Undefined)


def _default(value: Any, fallback: Any = "", boolean: bool = False) -> Any:
    """`x | default(y)`: y when x is absent, which in a spec is null as well as missing (`loop.last` at first)."""
    if _absent(value) or (boolean and not value):
        return fallback
    return value


def _tojson(value: Any, indent: int | None = None) -> str:
    # Jinja's own tojson escapes <, >, & and ' for HTML; a prompt wants the JSON as a model reads it.
    from jinja2 import Undefined

    return json.dumps(None if isinstance(value, Undefined) else value, ensure_ascii=False, indent=indent)


def _len(value: Any) -> int:
    return 0 if _absent(value) else len(value)


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _today() -> str:
    return _dt.datetime.now(_dt.timezone.utc).date().isoformat()


def as_record(value: Any) -> Any:
    """Text that is a JSON object or list reads as one (a step that answered JSON without `output`)."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


@lru_cache(maxsize=1)
def environment() -> SandboxedEnvironment:
    """The sandboxed environment every expression is parsed and evaluated in (made once)."""
    return _make()


@lru_cache(maxsize=1)
def whole_environment() -> SandboxedEnvironment:
    """The same environment for a template rendered whole (runtime/templates.py): `{%` and `{#` are no syntax
    there (their delimiters are set to text no spec holds), so literal text stays literal."""
    return _make(
        block_start_string="\x00\x01{%",
        block_end_string="%}\x01\x00",
        comment_start_string="\x00\x01{#",
        comment_end_string="#}\x01\x00",
    )


def _make(**options: Any) -> SandboxedEnvironment:
    from jinja2 import Undefined
    from jinja2.exceptions import SecurityError
    from jinja2.sandbox import SandboxedEnvironment

    class _Env(SandboxedEnvironment):
        # A record is a dict: its fields are keys, never a dict method (`reply.items` is the field `items`).
        def getattr(self, obj: Any, attribute: str) -> Any:
            obj = as_record(obj)
            if isinstance(obj, dict):
                return obj[attribute] if attribute in obj else self.undefined(obj=obj, name=attribute)
            if obj is None:
                return self.undefined(obj=obj, name=attribute)
            return super().getattr(obj, attribute)

        def getitem(self, obj: Any, argument: Any) -> Any:
            return super().getitem(as_record(obj), argument)

        # Python's internals (`__class__`, `mro`, a function's globals) fail the expression, never read empty.
        def unsafe_undefined(self, obj: Any, attribute: str) -> Any:
            raise SecurityError(f"access to attribute {attribute!r} of a {type(obj).__name__} is not allowed")

    env = _Env(autoescape=False, undefined=Undefined, keep_trailing_newline=True, **options)
    env.filters["default"] = env.filters["d"] = _default
    env.filters["tojson"] = _tojson
    env.globals.clear()  # Jinja's range, dict, lipsum, cycler, joiner, namespace: not plait's language
    env.globals.update(len=_len, now=_now, today=_today, json=_tojson)
    return env


@lru_cache(maxsize=4096)
def _template(text: str) -> nodes.Template:
    """The template `{{TEXT}}` parsed once, for `parse` and `compiled` both; ExprSyntaxError when Jinja cannot."""
    from jinja2 import TemplateSyntaxError

    try:
        return environment().parse("{{" + text + "}}")
    except TemplateSyntaxError as e:
        raise ExprSyntaxError(e.message or "not an expression") from None


@lru_cache(maxsize=4096)
def parse(text: str) -> nodes.Expr:
    """The tree of the expression `text` (what stands between `{{` and `}}`); ExprSyntaxError when it is not one."""
    from jinja2 import nodes

    body = _template(text).body
    if len(body) != 1 or not isinstance(body[0], nodes.Output) or len(body[0].nodes) != 1:
        raise ExprSyntaxError("not one expression")
    expr = body[0].nodes[0]
    if isinstance(expr, nodes.TemplateData):
        raise ExprSyntaxError("not an expression")
    return expr


@lru_cache(maxsize=4096)
def compiled(text: str) -> tuple[Any, frozenset[str]]:
    """(a function of the names the expression reads → its value, those names), compiled once per text."""
    from jinja2 import meta

    env = environment()
    parse(text)  # the syntax error, worded as the checker words it
    names = frozenset(meta.find_undeclared_variables(_template(text))) - set(env.globals)
    return env.compile_expression(text, undefined_to_none=False), names


class ExprFailed(Exception):
    """What an expression raised when called: a type the checker could not see (an undeclared input), or the
    sandbox refusing."""


def evaluate(text: str, read: Callable[[str], Any], absent: Any = None) -> Any:
    """The value of the expression `text`, each name it reads given by `read` (whose own exceptions pass
    through, so each caller says in its words that a name is not there); `absent` for a value Jinja leaves
    undefined. ExprFailed for what the expression itself raises."""
    from jinja2 import Undefined

    function, names = compiled(text)
    values = {name: read(name) for name in names}
    try:
        value = function(**values)
    except Exception as exc:
        raise ExprFailed(str(exc)) from None
    return absent if isinstance(value, Undefined) else value
