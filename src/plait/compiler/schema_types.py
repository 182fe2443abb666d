"""A locked MCP tool's JSON Schema (`input_schema`) → the plait type its arguments have.

Only what a condition over the arguments needs (an MCP server's conditional
`approval`, typed by check_flow): an object's properties, with JSON's scalar
types, string enums as literals and arrays as lists; anything else (a `$ref`,
`anyOf`, a schema without `type`) reads as `any`, which every path and value
fits, so a schema plait cannot follow never makes a condition wrong.
"""

from __future__ import annotations

from typing import Any

from plait.core import types as t

__all__ = ["from_json_schema"]

_SCALARS: dict[str, t.Type] = {"string": t.TEXT, "integer": t.INT, "number": t.FLOAT, "boolean": t.BOOL}


def from_json_schema(schema: Any) -> t.Type:
    """The type a value of `schema` has; `any` where the schema says nothing plait can type."""
    if not isinstance(schema, dict):
        return t.ANY
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and all(isinstance(v, str) for v in enum):
        return t.LiteralType(tuple(enum))
    kind = schema.get("type")
    if kind in _SCALARS:
        return _SCALARS[kind]
    if kind == "array":
        return t.ListType(from_json_schema(schema.get("items")))
    if kind == "object" and isinstance(schema.get("properties"), dict):
        required = set(schema.get("required") or ())
        return t.ObjectType(
            tuple(
                t.FieldType(name, from_json_schema(sub), optional=name not in required)
                for name, sub in schema["properties"].items()
            )
        )
    return t.ANY
