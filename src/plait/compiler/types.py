"""AST type expressions and typed blocks → core types, with unknown types, duplicate fields and bad defaults reported.

The one conversion every typed block goes through: tool `params`, and from
0.2 `output`, `answer`, `input` and `state`. `compiler.params` turns the
result into a tool's JSON Schema; type inference reads it directly.
"""

from __future__ import annotations

from typing import Any, Callable

from plait.core import types as t
from plait.core.codes import declare, make
from plait.core.diagnostics import Diagnostic, Fix, Severity
from plait.dsl import ast

from .schema import suggest

# The codes this module raises; their documentation is explain/<code>.md beside it.
P206 = declare("P206", "bad-default", Severity.ERROR, "a parameter default that does not match its type")
P207 = declare("P207", "unknown-type", Severity.ERROR, "a parameter type that does not exist")
P208 = declare("P208", "duplicate-parameter", Severity.ERROR, "two parameters with one name")

__all__ = ["block_type", "literal_value", "type_of"]

Report = Callable[[Diagnostic], None]

_PRIMITIVES: dict[str, t.Type] = {"string": t.TEXT, "int": t.INT, "float": t.FLOAT, "bool": t.BOOL}
_KNOWN = (*_PRIMITIVES, "list", "object")
_TYPES_NOTE = 'types: `string`, `int`, `float`, `bool`, `list[T]`, `object { ... }`, `"a" | "b"`, `T?`'


def _base(expr: ast.TypeExpr, report: Report) -> t.Type:
    """The type written, ignoring its `?`; an unknown type is reported and becomes `any` (nothing cascades)."""
    if expr.form == "union":
        return t.LiteralType(tuple(lit.value for lit in expr.literals), expr.span)
    if expr.form == "name" and expr.name in _PRIMITIVES:
        return _PRIMITIVES[expr.name]
    if expr.form == "generic" and expr.name == "list" and len(expr.args) == 1:
        item = type_of(expr.args[0], report)
        return t.ListType(item)
    if expr.form == "object" and expr.name == "object":
        return _object(expr.fields, expr.span, report)
    hint = suggest(expr.name or "", _KNOWN)
    shape = {"generic": f"{expr.name}[...]", "object": f"{expr.name} {{...}}"}.get(expr.form, expr.name)
    report(
        make(
            "P207",
            f"unknown type `{shape}`",
            expr.span,
            notes=[_TYPES_NOTE],
            fix=Fix(f"did you mean `{hint}`?", expr.span, hint) if hint and expr.form == "name" else None,
        )
    )
    return t.ANY


def type_of(expr: ast.TypeExpr, report: Report) -> t.Type:
    """A type expression where it is not a field (a list's item): `T?` is an OptionalType."""
    base = _base(expr, report)
    return t.OptionalType(base) if expr.optional and not isinstance(base, t.AnyType) else base


def literal_value(value: ast.Node) -> tuple[bool, Any]:
    """(True, the JSON value) for a literal written in a spec, else (False, None)."""
    if isinstance(value, ast.String | ast.Number | ast.Bool):
        return True, value.value
    if isinstance(value, ast.ListValue):
        items = [literal_value(v) for v in value.items]
        return all(ok for ok, _ in items), [v for _, v in items]
    if isinstance(value, ast.Block) and not value.params:
        entries = {a.key.name: literal_value(a.value) for a in value.attributes}
        return all(ok for ok, _ in entries.values()), {k: v for k, (_, v) in entries.items()}
    return False, None


def _bad_default(name: str, declared: t.Type, optional: bool, value: Any, ok: bool) -> str:
    shown = t.describe(declared) + ("?" if optional else "")
    message = f"default of `{name}` does not match its type `{shown}`"
    if ok and isinstance(declared, t.LiteralType):
        allowed = ", ".join(t.describe(t.LiteralType((v,))) for v in declared.values)
        found = t.describe(t.LiteralType((value,))) if isinstance(value, str | int | float | bool) else "a value"
        message += f": {found} is not one of {allowed}"
    return message


def _object(params: tuple[ast.Param, ...], span: Any, report: Report) -> t.ObjectType:
    fields: list[t.FieldType] = []
    seen: set[str] = set()
    for param in params:
        name = param.name.name
        if name in seen:
            report(make("P208", f"parameter `{name}` is declared twice", param.name.span))
            continue
        seen.add(name)
        declared = _base(param.type, report)
        description = param.description.value if param.description is not None else None
        default, has_default = None, False
        if param.default is not None:
            ok, value = literal_value(param.default)
            if not ok or not t.matches(declared, value):
                message = _bad_default(name, declared, param.type.optional, value, ok)
                report(make("P206", message, param.default.span))
            else:
                default, has_default = value, True
        fields.append(
            t.FieldType(name, declared, param.type.optional, description, default, has_default, param.name.span)
        )
    return t.ObjectType(tuple(fields), span)


def block_type(params: ast.Params | None, report: Report) -> t.ObjectType:
    """A typed block (`params`, `output`, `answer`, `input`, `state`) as a record; none written is an empty one."""
    if params is None:
        return t.ObjectType(())
    return _object(params.params, params.span, report)
