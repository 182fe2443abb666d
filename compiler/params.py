"""Tool `params { ... }` → JSON Schema, with every default checked against its type."""

from __future__ import annotations

from typing import Any, Callable

from plait.dsl import ast
from plait.core.diagnostics import Diagnostic, Fix

from plait.core.codes import make
from .schema import suggest

__all__ = ["params_schema"]

_PRIMITIVES = {"string": "string", "int": "integer", "float": "number", "bool": "boolean"}
_KNOWN = (*_PRIMITIVES, "list", "object")


def _type_schema(t: ast.TypeExpr, report: Callable[[Diagnostic], None]) -> dict[str, Any] | None:
    if t.form == "union":
        return {"type": "string", "enum": [lit.value for lit in t.literals]}
    if t.form == "name" and t.name in _PRIMITIVES:
        return {"type": _PRIMITIVES[t.name]}
    if t.form == "generic" and t.name == "list" and len(t.args) == 1:
        items = _type_schema(t.args[0], report)
        return None if items is None else {"type": "array", "items": items}
    if t.form == "object" and t.name == "object":
        return _object_schema(t.fields, report)
    hint = suggest(t.name or "", _KNOWN)
    shape = {"generic": f"{t.name}[...]", "object": f"{t.name} {{...}}"}.get(t.form, t.name)
    report(
        make(
            "P207",
            f"unknown type `{shape}`",
            t.span,
            notes=["types: `string`, `int`, `float`, `bool`, `list[T]`, `object { ... }`, `\"a\" | \"b\"`, `T?`"],
            fix=Fix(f"did you mean `{hint}`?", t.span, hint) if hint and t.form == "name" else None,
        )
    )
    return None


def _literal(value: ast.Node) -> tuple[bool, Any]:
    if isinstance(value, ast.String | ast.Number | ast.Bool):
        return True, value.value
    if isinstance(value, ast.ListValue):
        items = [_literal(v) for v in value.items]
        return all(ok for ok, _ in items), [v for _, v in items]
    if isinstance(value, ast.Block) and not value.params:
        entries = {a.key.name: _literal(a.value) for a in value.attributes}
        return all(ok for ok, _ in entries.values()), {k: v for k, (_, v) in entries.items()}
    return False, None


def _matches(schema: dict[str, Any], value: Any) -> bool:
    kind = schema.get("type")
    if "enum" in schema:
        return value in schema["enum"]
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "array":
        return isinstance(value, list) and all(_matches(schema["items"], v) for v in value)
    if kind == "object":
        props = schema.get("properties", {})
        return (
            isinstance(value, dict)
            and all(k in props and _matches(props[k], v) for k, v in value.items())
            and all(k in value for k in schema.get("required", ()))
        )
    return True


def _object_schema(params: tuple[ast.Param, ...], report: Callable[[Diagnostic], None]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    seen: set[str] = set()
    for param in params:
        name = param.name.name
        if name in seen:
            report(make("P208", f"parameter `{name}` is declared twice", param.name.span))
            continue
        seen.add(name)
        schema = _type_schema(param.type, report) or {}
        if param.description is not None:
            schema["description"] = param.description.value
        if param.default is not None:
            ok, value = _literal(param.default)
            if not ok or (schema and not _matches(schema, value)):
                report(
                    make(
                        "P206",
                        f"default of `{name}` does not match its type `{_show(param.type)}`",
                        param.default.span,
                    )
                )
            else:
                schema["default"] = value
        elif not param.type.optional:
            required.append(name)
        properties[name] = schema
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = required
    return out


def _show(t: ast.TypeExpr) -> str:
    if t.form == "union":
        base = " | ".join(f'"{lit.value}"' for lit in t.literals)
    elif t.form == "generic":
        base = f"{t.name}[{', '.join(_show(a) for a in t.args)}]"
    elif t.form == "object":
        base = "object {...}"
    else:
        base = t.name or "?"
    return base + ("?" if t.optional else "")


def params_schema(params: ast.Params | None, report: Callable[[Diagnostic], None]) -> dict[str, Any]:
    return _object_schema(params.params if params else (), report)
