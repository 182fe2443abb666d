"""A step's `messages = [system("..."), user("..."), ...]` in the AST → the template strings in it.

Each message's content is a template like a `prompt`: the template checks (check_flow's paths and
expressions, unresolved_template's malformed placeholders) and the editor's index read these strings as
they read a prompt. The list's shape is check_types' (P230).
"""

from __future__ import annotations

from plait.dsl import ast

__all__ = ["message_strings"]


def message_strings(decl: ast.Node) -> list[ast.String]:
    """The contents of a step's messages, in order; none for any other declaration or a list of another shape."""
    body = getattr(decl, "body", None) if isinstance(decl, ast.StepDecl) else None
    entry = body.get("messages") if body is not None else None
    value = entry.value if entry is not None else None
    if not isinstance(value, ast.ListValue):
        return []
    return [
        item.args[0]
        for item in value.items
        if isinstance(item, ast.Call) and len(item.args) == 1 and isinstance(item.args[0], ast.String)
    ]
