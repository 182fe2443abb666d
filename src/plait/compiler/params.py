"""Tool `params { ... }` → JSON Schema, with every default checked against its type.

The conversion itself is `compiler.types` (shared with `output`, `answer`,
`input` and `state`); a tool's schema is the non-strict form, which keeps
defaults and leaves optional parameters out of `required`.
"""

from __future__ import annotations

from typing import Any, Callable

from plait.core.diagnostics import Diagnostic
from plait.core.types import to_json_schema
from plait.dsl import ast

from .types import Named, block_type

__all__ = ["params_schema"]


def params_schema(
    params: ast.Params | None, report: Callable[[Diagnostic], None], named: Named | None = None
) -> dict[str, Any]:
    """`named`: the spec's `type` declarations, which a parameter may name (`flight: Flight`)."""
    return to_json_schema(block_type(params, report, named or {}), strict=False)
