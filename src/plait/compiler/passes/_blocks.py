"""Declaration blocks → the attributes that count, and the wording every attribute pass shares.

Shared by resolve_names, check_types and check_chains so they agree on which
attribute a block really sets (the first of each known key) and how a wrong
value is described.
"""

from __future__ import annotations

from typing import Callable, Iterator

from plait.core.codes import make
from plait.core.diagnostics import Diagnostic
from plait.dsl import ast

from ..schema import Attr

__all__ = ["REF_TYPES", "TYPE_WORDS", "body_of", "describe_value", "inline_id", "path_parts", "settled", "wrong_type"]

#: Attribute types whose values are names: resolve_names fills them, check_types leaves them alone.
REF_TYPES = frozenset({"ref", "refs", "until"})

TYPE_WORDS = {
    "string": "a string",
    "template": "a string",
    "number": "a number",
    "int": "a whole number",
    "duration": "a duration like `30s`",
    "size": "a size like `4MB`",
    "bool": "`true` or `false`",
    "map": 'a map `{ "key" = value }`',
    "ref": "a name",
    "refs": "a list of names `[a, b]`",
    "symbol": "one of",
    "symbols": "a list of",
    "run": '`python("module:function")`, `http(METHOD, "url")`, `delegate(AGENT)` or `hosted(KIND)`',
    "env": '`env("VARIABLE")`',
    "keep_last": "`keep_last(N)`",
    "validator": '`python("module:function")`',
    "messages": '`[system("..."), user("...")]`',
    "until": "a tool name, a list of tool names, or `TOOL succeeded`",
    "condition": 'a condition like `verdict == "accept"`',
    "approval": "`required`, `never` or a condition over the arguments like `amount > 100`",
    "path": "a path like `input.sections`",
    "strings": 'a non-empty list of strings `["prog", "arg"]`',
    "names": "a list of tool names `[read_file, list_directory]`",
    "mcp_approval": 'a list of tool names `[write_file]` or `{ write_file = required, move_file = path != "x" }`',
    "env_map": '`{ KEY = env("VARIABLE") }` (or a literal string value)',
    "tool_choice": "`auto`, `none`, `required` or a tool name",
    "bindings": "`with { name: path, ... }`",
}


def describe_value(value: ast.Node) -> str:
    return {
        "string": "a string",
        "number": "a number",
        "duration": "a duration",
        "size": "a size",
        "bool": "a boolean",
        "ref": "a name",
        "path": "a path",
        "succeeded": "`… succeeded`",
        "list": "a list",
        "call": "a call",
        "block": "a map",
        "compare": "a comparison",
        "not": "a condition",
        "boolop": "a condition",
    }.get(getattr(value, "kind", ""), "a value")


def wrong_type(report: Callable[[Diagnostic], None], attr: str, spec: Attr, value: ast.Node) -> None:
    expected = TYPE_WORDS[spec.type]
    if spec.type in ("symbol", "symbols"):
        expected += " " + ", ".join(f"`{c}`" for c in spec.choices)
    report(make("P203", f"`{attr}` must be {expected}, found {describe_value(value)}", value.span))


def path_parts(value: ast.Node) -> tuple[str, ...] | None:
    """A value written as a path (`planner.tasks`, or a bare name) → its parts; None for any other value."""
    if isinstance(value, ast.PathValue):
        return tuple(value.parts)
    if isinstance(value, ast.Ref):
        return (value.name,)
    return None


def body_of(decl: ast.Node) -> ast.Block | None:
    """A declaration's attribute block: `body` for most kinds, `block` for loop, map and ask."""
    body = getattr(decl, "body", None)
    if isinstance(body, ast.Block):
        return body
    block = getattr(decl, "block", None)
    return block if isinstance(block, ast.Block) else None


def settled(body: ast.Block | None, schema: dict[str, Attr]) -> Iterator[ast.Attribute]:
    """The attributes whose values count: the first of each key the kind has (check_types reports the rest)."""
    seen: set[str] = set()
    for entry in body.attributes if body else ():
        key = entry.key.name
        if key in seen:
            continue
        seen.add(key)
        if key in schema and not entry.quoted:
            yield entry


def inline_id(owner: str, count: int) -> str:
    """The node id of the `count`-th (from 1) inline `parallel(...)` written in `owner`."""
    return f"{owner}/parallel#{count}"
