"""AST type expressions, typed blocks and `type` declarations → core types, with unknown types, duplicate fields,
bad defaults, cyclic types and unions of records without a discriminating field reported.

The one conversion every typed block goes through: tool `params`, and from
0.2 `output`, `answer`, `input` and `state`, and from 0.3 the named types
(`type Flight { ... }`, `type Booking = Flight | Hotel`) they may use.
`compiler.params` turns the result into a tool's JSON Schema; type inference
reads it directly.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Mapping

from plait.core import types as t
from plait.core.codes import declare, make
from plait.core.diagnostics import Diagnostic, Fix, Severity, did_you_mean
from plait.dsl import ast

from .schema import suggest

# The codes this module raises; their documentation is explain/<code>.md beside it.
P206 = declare("P206", "bad-default", Severity.ERROR, "a parameter default that does not match its type")
P207 = declare("P207", "unknown-type", Severity.ERROR, "a parameter type that does not exist")
P208 = declare("P208", "duplicate-parameter", Severity.ERROR, "two parameters with one name")
P210 = declare("P210", "cyclic-type", Severity.ERROR, "a named type that contains itself")
P211 = declare(
    "P211", "undiscriminated-union", Severity.ERROR, "a union of types that are not records told apart by one field"
)

__all__ = ["block_type", "literal_value", "named_types", "output_type", "type_names", "type_of"]

Report = Callable[[Diagnostic], None]
#: The spec's named types (`type NAME ...`), by name: what a type expression's name may also mean.
Named = Mapping[str, t.Type]

_PRIMITIVES: dict[str, t.Type] = {
    "string": t.TEXT,
    "int": t.INT,
    "float": t.FLOAT,
    "bool": t.BOOL,
    "date": t.DATE,
    "datetime": t.DATETIME,
}
_KNOWN = (*_PRIMITIVES, "list", "object")
_TYPES_NOTE = (
    'types: `string`, `int`, `float`, `bool`, `date`, `datetime`, `list[T]`, `object { ... }`, `"a" | "b"`,'
    " `1 | 2`, `T?`, and the spec's own `type` names"
)
_NOTHING: Named = {}


def _base(expr: ast.TypeExpr, report: Report, named: Named = _NOTHING) -> t.Type:
    """The type written, ignoring its `?`; an unknown type is reported and becomes `any` (nothing cascades)."""
    if expr.form == "union":
        return t.LiteralType(tuple(lit.value for lit in expr.literals), expr.span)
    if expr.form == "name" and expr.name in _PRIMITIVES:
        return _PRIMITIVES[expr.name]
    if expr.form == "name" and expr.name is not None and expr.name in named:
        return named[expr.name]
    if expr.form == "names":
        return _records(expr, report, named)
    if expr.form == "generic" and expr.name == "list" and len(expr.args) == 1:
        item = type_of(expr.args[0], report, named)
        return t.ListType(item)
    if expr.form == "object" and expr.name == "object":
        return _object(expr.fields, expr.span, report, named)
    hint = suggest(expr.name or "", (*_KNOWN, *named))
    shape = {"generic": f"{expr.name}[...]", "object": f"{expr.name} {{...}}"}.get(expr.form, expr.name)
    report(
        make(
            "P207",
            f"unknown type `{shape}`",
            expr.span,
            notes=[_TYPES_NOTE],
            fix=did_you_mean(hint, expr.span) if expr.form == "name" else None,
        )
    )
    return t.ANY


def _records(expr: ast.TypeExpr, report: Report, named: Named) -> t.Type:
    """`Flight | Hotel`: records with one field whose literals tell them apart (P211 otherwise)."""
    options = [_base(arg, report, named) for arg in expr.args]
    if any(isinstance(o, t.AnyType) for o in options):  # an unknown name: reported already
        return t.ANY
    union = t.UnionType(tuple(options))
    if t.discriminator(union) is None:
        names = " | ".join(arg.name or "" for arg in expr.args)
        not_records = [arg.name for arg, o in zip(expr.args, options) if not isinstance(o, t.ObjectType)]
        why = (
            f"`{not_records[0]}` is not a record"
            if not_records
            else "no field is declared in every one of them, required, as literals no two of them share"
        )
        report(
            make(
                "P211",
                f"`{names}` cannot be told apart: {why}",
                expr.span,
                notes=[
                    "a union of named types is a union of records with one discriminating field, such as"
                    ' `kind: "flight"` in `Flight` and `kind: "hotel"` in `Hotel`; a route on that field'
                    " narrows each case to its record"
                ],
                fix=Fix('give each record a field of its own literal, e.g. `kind: "flight"`'),
            )
        )
        return t.ANY
    return union


def type_of(expr: ast.TypeExpr, report: Report, named: Named = _NOTHING) -> t.Type:
    """A type expression where it is not a field (a list's item): `T?` is an OptionalType."""
    base = _base(expr, report, named)
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


def _object(params: tuple[ast.Param, ...], span: Any, report: Report, named: Named = _NOTHING) -> t.ObjectType:
    fields: list[t.FieldType] = []
    seen: set[str] = set()
    for param in params:
        name = param.name.name
        if name in seen:
            report(make("P208", f"parameter `{name}` is declared twice", param.name.span))
            continue
        seen.add(name)
        declared = _base(param.type, report, named)
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


def block_type(params: ast.Params | None, report: Report, named: Named = _NOTHING) -> t.ObjectType:
    """A typed block (`params`, `output`, `answer`, `input`, `state`) as a record; none written is an empty one."""
    if params is None:
        return t.ObjectType(())
    return _object(params.params, params.span, report, named)


def output_type(params: ast.Params, report: Report, named: Named = _NOTHING) -> t.Type:
    """An `output { ... }` as a record, or `output TYPE` (plait 0.3) as that type: a list, a named record or union."""
    if params.type is None:
        return block_type(params, report, named)
    return type_of(params.type, report, named)


class _Resolving(dict[str, t.Type]):
    """The named types, each converted the first time a type expression names it (cycles are P210)."""

    def __init__(self, decls: Mapping[str, ast.TypeDecl], report: Report) -> None:
        super().__init__()
        self.decls, self.report = decls, report
        self.open: list[str] = []

    def __contains__(self, name: object) -> bool:
        return name in self.decls

    def __iter__(self) -> Any:
        return iter(self.decls)

    def __missing__(self, name: str) -> t.Type:
        if name in self.open:
            cycle = [*self.open[self.open.index(name) :], name]
            decl = self.decls[name]
            self.report(
                make(
                    "P210",
                    f"type `{name}` contains itself: {' → '.join(cycle)}",
                    decl.name.span,
                    notes=["a type is a finite JSON Schema: a record cannot hold itself, even in a list or as `T?`"],
                    fix=Fix("break the cycle: hold an identifier (a `string`) instead of the record"),
                )
            )
            return t.ANY
        self.open.append(name)
        try:
            made = _declared(self.decls[name], self.report, self)
        finally:
            self.open.pop()
        self[name] = made
        return made


def _declared(decl: ast.TypeDecl, report: Report, named: Named) -> t.Type:
    name = decl.name.name
    if decl.alias is not None:
        made = type_of(decl.alias, report, named)
        return t.UnionType(made.options, name=name) if isinstance(made, t.UnionType) else made
    record = block_type(decl.fields, report, named)
    description = decl.description.value if decl.description is not None else None
    return t.ObjectType(record.fields, record.span, name=name, description=description)


def named_types(decls: Mapping[str, ast.TypeDecl], report: Report) -> dict[str, t.Type]:
    """Every `type` declaration as its type, in declaration order; an unknown name in one is P207, a cycle P210."""
    resolving = _Resolving(decls, report)
    return {name: resolving[name] for name in decls}


def type_names(decl: Any) -> Iterator[str]:
    """The names a declaration's types are written with (`Flight` in `output list[Flight]`, in a tool's
    `params`, in `input`, in another `type`): what makes a named type used."""
    body = getattr(decl, "block", None) if isinstance(decl, ast.AskDecl) else getattr(decl, "body", None)
    blocks = list(body.params) if isinstance(body, ast.Block) else []
    fields = getattr(decl, "fields", None)
    if isinstance(fields, ast.Params):  # input, state, a `type` record
        blocks.append(fields)
    stack = [p.type for block in blocks for p in block.params] + [b.type for b in blocks if b.type is not None]
    if isinstance(decl, ast.TypeDecl) and decl.alias is not None:
        stack.append(decl.alias)
    while stack:
        expr = stack.pop()
        if expr.form == "name" and expr.name is not None:
            yield expr.name
        stack.extend(expr.args)
        stack.extend(p.type for p in expr.fields)
