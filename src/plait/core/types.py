"""Type vocabulary → JSON Schema, messages and path lookups: what flows between runnables.

One set of frozen records for every stage: the compiler converts a spec's
`params`/`output`/`answer`/`input`/`state` blocks into these, infers each
runnable's output type, checks `{{...}}` paths against them, and the graph and
runtime carry them (the runtime validates replies against `to_json_schema`).
Spans are kept where a type was declared so a diagnostic can point there; they
never take part in equality.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any, Iterable, Sequence, Union

from plait.core.record import Record, record
from plait.core.source import Span

__all__ = [
    "ANY",
    "BOOL",
    "DATE",
    "DATETIME",
    "FLOAT",
    "INT",
    "TEXT",
    "AnyType",
    "BoolType",
    "DateTimeType",
    "DateType",
    "FieldType",
    "FloatType",
    "IntType",
    "ListType",
    "LiteralType",
    "ObjectType",
    "OptionalType",
    "TextType",
    "Type",
    "UnionType",
    "describe",
    "discriminator",
    "field_names",
    "is_iso",
    "is_numeric",
    "lookup",
    "matches",
    "narrow",
    "step",
    "strip_optional",
    "to_json_schema",
    "union_of",
]

Literal = Union[str, int, float, bool]


@record(kw_only=False)
class TextType(Record):
    kind: str = "string"


@record(kw_only=False)
class IntType(Record):
    kind: str = "int"


@record(kw_only=False)
class FloatType(Record):
    kind: str = "float"


@record(kw_only=False)
class BoolType(Record):
    kind: str = "bool"


@record(kw_only=False)
class DateType(Record):
    """`date`: an ISO 8601 calendar date as text (`2026-12-05`), checked at run time."""

    kind: str = "date"


@record(kw_only=False)
class DateTimeType(Record):
    """`datetime`: an ISO 8601 date and time as text (`2026-12-05T08:30:00Z`), checked at run time."""

    kind: str = "datetime"


@record(kw_only=False)
class AnyType(Record):
    """Unknown until run time (a run's undeclared input, a parallel's `{{input}}` JSON): every path is allowed."""

    kind: str = "any"


@record(kw_only=False)
class LiteralType(Record):
    """`"billing" | "tech"`: one of these values."""

    values: tuple[Literal, ...]
    span: Span | None = field(default=None, compare=False, repr=False)
    kind: str = "literal"


@record(kw_only=False)
class ListType(Record):
    item: "Type"
    kind: str = "list"


@record(kw_only=False)
class FieldType(Record):
    name: str
    type: "Type"
    #: May be absent or null (`T?`); reading it renders empty text.
    optional: bool = False
    description: str | None = None
    #: A tool parameter's default (only `has_default` says whether there is one: None is a value).
    default: Any = None
    has_default: bool = False
    span: Span | None = field(default=None, compare=False, repr=False)


@record(kw_only=False)
class ObjectType(Record):
    """A record: `object { ... }`, an `output` block, a parallel's branches."""

    fields: tuple[FieldType, ...]
    #: Where it was declared (the `output` block, the `object {` ...), for a diagnostic's second label.
    span: Span | None = field(default=None, compare=False, repr=False)
    kind: str = "object"
    #: The `type NAME` it was declared as (messages and JSON Schema titles say it); None for an anonymous one.
    name: str | None = field(default=None, compare=False)
    #: A `type NAME "description"`'s description: the JSON Schema's, which a model reads.
    description: str | None = field(default=None, compare=False)

    def get(self, name: str) -> FieldType | None:
        for f in self.fields:
            if f.name == name:
                return f
        return None


@record(kw_only=False)
class OptionalType(Record):
    """`T?` where it is not a field (a list's item); a field's own `?` is `FieldType.optional`."""

    inner: "Type"
    kind: str = "optional"


@record(kw_only=False)
class UnionType(Record):
    """One of several types: a route's output when its cases produce different ones, or `type B = F | H`.

    `partial` (a route's output): a field only some options declare reads as
    optional, since the case that ran may not have produced it. A declared
    union of records is read field by field only where all its options agree,
    or after a route on its discriminator narrows it (`narrow`)."""

    options: tuple["Type", ...]
    kind: str = "union"
    partial: bool = field(default=False, compare=False)
    #: The `type NAME` it was declared as; None for an anonymous one.
    name: str | None = field(default=None, compare=False)


Type = Union[
    TextType,
    IntType,
    FloatType,
    BoolType,
    DateType,
    DateTimeType,
    AnyType,
    LiteralType,
    ListType,
    ObjectType,
    OptionalType,
    UnionType,
]

TEXT, INT, FLOAT, BOOL, ANY = TextType(), IntType(), FloatType(), BoolType(), AnyType()
DATE, DATETIME = DateType(), DateTimeType()


def union_of(types: Iterable[Type]) -> Type:
    """The union of `types`, flattened, without repeats; one type stays itself; any absorbs all."""
    options: list[Type] = []
    for t in types:
        for option in t.options if isinstance(t, UnionType) else (t,):
            if isinstance(option, AnyType):
                return ANY
            if option not in options:
                options.append(option)
    if not options:
        return ANY
    literals = [o for o in options if isinstance(o, LiteralType)]
    if len(options) > 1 and len(literals) == len(options):
        # `"flight" | "hotel"`: one literal union (what a route's subject and a condition's operand need).
        merged: list[Literal] = []
        for option in literals:
            merged += [v for v in option.values if not any(v == m and type(v) is type(m) for m in merged)]
        return LiteralType(tuple(merged))
    return options[0] if len(options) == 1 else UnionType(tuple(options))


def strip_optional(t: Type) -> Type:
    while isinstance(t, OptionalType):
        t = t.inner
    return t


def is_numeric(t: Type) -> bool:
    t = strip_optional(t)
    if isinstance(t, LiteralType):
        return all(isinstance(v, int | float) and not isinstance(v, bool) for v in t.values)
    return isinstance(t, IntType | FloatType | AnyType)


# --- paths ------------------------------------------------------------------------


def step(t: Type, name: str) -> Type | None:
    """The type of field `name` of `t`, or None when `t` has no such field.

    A union has the field when every option has it; an optional record's field
    is optional too (it renders empty when the record is absent)."""
    if isinstance(t, AnyType):
        return ANY
    if isinstance(t, OptionalType):
        inner = step(t.inner, name)
        return None if inner is None else _optional(inner)
    if isinstance(t, UnionType):
        found = [step(option, name) for option in t.options]
        if not any(f is None for f in found):
            return union_of(f for f in found if f is not None)
        # A route's cases that are all records: a field some of them declare may be absent, so it is optional.
        if t.partial and any(f is not None for f in found) and all(_is_record(o) for o in t.options):
            return _optional(union_of(f for f in found if f is not None))
        return None
    if isinstance(t, ObjectType):
        f = t.get(name)
        if f is None:
            return None
        return _optional(f.type) if f.optional else f.type
    return None


def _is_record(t: Type) -> bool:
    return isinstance(strip_optional(t), ObjectType | AnyType)


def discriminator(t: Type) -> str | None:
    """The field that tells a union of records apart: every option declares it (not optional) as literals, and
    no literal belongs to two options. None when `t` is no such union."""
    if not isinstance(t, UnionType) or len(t.options) < 2:
        return None
    records = [o for o in t.options if isinstance(o, ObjectType)]
    if len(records) != len(t.options):
        return None
    for candidate in records[0].fields:
        seen: set[Any] = set()
        for option in records:
            f = option.get(candidate.name)
            if f is None or f.optional or not isinstance(f.type, LiteralType):
                break
            values = {(type(v), v) for v in f.type.values}
            if values & seen:
                break
            seen |= values
        else:
            return candidate.name
    return None


def narrow(t: Type, name: str, values: Iterable[Literal]) -> Type:
    """`t` as it is when field `name` holds one of `values`: the options of a union of records that allow one.

    What a route on a union's discriminator gives each case. Anything else (or no option left) stays `t`."""
    inner = strip_optional(t)
    if not isinstance(inner, UnionType):
        return t
    wanted = {(type(v), v) for v in values}
    kept = []
    for option in inner.options:
        f = option.get(name) if isinstance(option, ObjectType) else None
        if f is not None and isinstance(f.type, LiteralType) and {(type(v), v) for v in f.type.values} & wanted:
            kept.append(option)
    if not kept or len(kept) == len(inner.options):
        return t
    return kept[0] if len(kept) == 1 else UnionType(tuple(kept), name=None)


def _optional(t: Type) -> Type:
    return t if isinstance(t, OptionalType | AnyType) else OptionalType(t)


def lookup(t: Type, path: Sequence[str]) -> Type | None:
    """The type at `path` (field names) inside `t`, or None when some part does not exist."""
    current: Type | None = t
    for part in path:
        if current is None:
            return None
        current = step(current, part)
    return current


def field_names(t: Type) -> list[str]:
    """The fields a path may name next, for "did you mean" and for listing them."""
    t = strip_optional(t)
    if isinstance(t, ObjectType):
        return [f.name for f in t.fields]
    if isinstance(t, UnionType):
        common: list[str] | None = None
        every: list[str] = []
        for option in t.options:
            names = field_names(option)
            common = names if common is None else [n for n in common if n in names]
            every += [n for n in names if n not in every]
        if t.partial and all(_is_record(o) for o in t.options):
            return every
        return common or []
    return []


# --- messages ---------------------------------------------------------------------


def _literal(value: Literal) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(value)


def describe(t: Type, *, fields: bool = False) -> str:
    """How a type is written in a spec: `string`, `"a" | "b"`, `list[int]`, `object {...}`, `T?`.

    Records are `object {...}` unless `fields` asks for their field names."""
    if isinstance(t, TextType):
        return "string"
    if isinstance(t, IntType | FloatType | BoolType | DateType | DateTimeType):
        return t.kind
    if isinstance(t, AnyType):
        return "any"
    if isinstance(t, LiteralType):
        return " | ".join(_literal(v) for v in t.values)
    if isinstance(t, ListType):
        return f"list[{describe(t.item, fields=fields)}]"
    if isinstance(t, OptionalType):
        inner = describe(t.inner, fields=fields)
        return f"({inner})?" if isinstance(t.inner, LiteralType | UnionType) else inner + "?"
    if isinstance(t, UnionType):
        if t.name is not None:
            return t.name
        return " | ".join(describe(o, fields=fields) for o in t.options)
    if t.name is not None:
        return t.name
    if not fields:
        return "object {...}"
    return "object { " + ", ".join(f.name + ("?" if f.optional else "") for f in t.fields) + " }"


# --- values -----------------------------------------------------------------------


def matches(t: Type, value: Any) -> bool:
    """Whether a JSON value has type `t` (a default, a scripted reply, an answer)."""
    if isinstance(t, AnyType):
        return True
    if isinstance(t, OptionalType):
        return value is None or matches(t.inner, value)
    if isinstance(t, UnionType):
        return any(matches(o, value) for o in t.options)
    if isinstance(t, LiteralType):
        # `True == 1` in Python: a literal matches only a value of its own JSON type.
        return any(value == v and type(value) is type(v) for v in t.values)
    if isinstance(t, TextType):
        return isinstance(value, str)
    if isinstance(t, IntType):
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(t, FloatType):
        return isinstance(value, int | float) and not isinstance(value, bool)
    if isinstance(t, BoolType):
        return isinstance(value, bool)
    if isinstance(t, DateType | DateTimeType):
        return isinstance(value, str) and is_iso(t.kind, value)
    if isinstance(t, ListType):
        return isinstance(value, list) and all(matches(t.item, v) for v in value)
    if not isinstance(value, dict):
        return False
    declared = {f.name: f for f in t.fields}
    for key, v in value.items():
        f = declared.get(key)
        if f is None or not (matches(f.type, v) or (f.optional and v is None)):
            return False
    return all(f.name in value for f in t.fields if not f.optional and not f.has_default)


def is_iso(kind: str, text: str) -> bool:
    """Whether `text` is an ISO 8601 `date` (`2026-12-05`) or `datetime` (a date, `T` or a space, a time, an
    optional offset): what a `date`/`datetime` field holds, and the JSON Schema formats `date`/`date-time`."""
    from datetime import date, datetime

    try:
        if kind == "date":
            date.fromisoformat(text)
            return len(text) == 10
        if len(text) < 11 or text[10] not in "Tt ":
            return False
        datetime.fromisoformat(text.replace("z", "Z"))
        return True
    except ValueError:
        return False


# --- JSON Schema ------------------------------------------------------------------


_JSON_TYPES = {"string": "string", "int": "integer", "float": "number", "bool": "boolean"}
#: JSON Schema's names for the formats a `date` and a `datetime` are written in.
FORMATS = {"date": "date", "datetime": "date-time"}


def _enum_type(values: tuple[Literal, ...]) -> str | None:
    kinds = {
        "boolean"
        if isinstance(v, bool)
        else "string"
        if isinstance(v, str)
        else "integer"
        if isinstance(v, int)
        else "number"
        for v in values
    }
    if kinds == {"integer", "number"}:
        return "number"
    return kinds.pop() if len(kinds) == 1 else None


def to_json_schema(t: Type, *, strict: bool = True, nullable: bool = False) -> dict[str, Any]:
    """`t` as JSON Schema.

    strict (what a model is asked for; OpenAI's structured-output rules, which
    the other providers accept): every object has `additionalProperties: false`
    and lists every field in `required`; an optional field is `anyOf [T, null]`;
    no defaults. Not strict (a tool's parameters, as the model sees a function):
    optional fields and fields with a default are simply not required, and
    defaults are given; `nullable` also lets an optional field be null (what a
    code step's return value is checked against: absent or null, as the
    reference says)."""
    if isinstance(t, TextType | IntType | FloatType | BoolType):
        return {"type": _JSON_TYPES[t.kind]}
    if isinstance(t, DateType | DateTimeType):
        return {"type": "string", "format": FORMATS[t.kind]}
    if isinstance(t, AnyType):
        return {}
    if isinstance(t, LiteralType):
        kind = _enum_type(t.values)
        return {"type": kind, "enum": list(t.values)} if kind else {"enum": list(t.values)}
    if isinstance(t, ListType):
        return {"type": "array", "items": to_json_schema(t.item, strict=strict, nullable=nullable)}
    if isinstance(t, OptionalType):
        inner = to_json_schema(t.inner, strict=strict, nullable=nullable)
        return {"anyOf": [inner, {"type": "null"}]} if strict or nullable else inner
    if isinstance(t, UnionType):
        union: dict[str, Any] = {"anyOf": [to_json_schema(o, strict=strict, nullable=nullable) for o in t.options]}
        if t.name is not None and not strict:
            union["title"] = t.name
        return union
    properties: dict[str, Any] = {}
    required: list[str] = []
    for f in t.fields:
        schema = to_json_schema(f.type, strict=strict, nullable=nullable)
        if (strict or nullable) and f.optional:
            schema = {"anyOf": [schema, {"type": "null"}]}
        if f.description is not None:
            schema["description"] = f.description
        if not strict and f.has_default:
            schema["default"] = f.default
        if strict or not (f.optional or f.has_default):
            required.append(f.name)
        properties[f.name] = schema
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if t.name is not None and not strict:  # what `plait graph --json` and a tool's schema call it
        out["title"] = t.name
    if t.description is not None:
        out["description"] = t.description
    if required or strict:
        out["required"] = required
    if strict:
        out["additionalProperties"] = False
    return out
