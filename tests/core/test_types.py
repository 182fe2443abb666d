"""core.types: the JSON Schema a model is asked for, the messages' spelling of types, and path lookups."""

from __future__ import annotations

import pytest

from plait.core import types as t

RECORD = t.ObjectType(
    (
        t.FieldType("category", t.LiteralType(("billing", "tech"))),
        t.FieldType("urgency", t.INT, description="1 to 5"),
        t.FieldType("note", t.TEXT, optional=True),
        t.FieldType("sections", t.ListType(t.ObjectType((t.FieldType("title", t.TEXT),)))),
    )
)


def test_strict_schema_follows_openai_structured_output_rules():
    schema = t.to_json_schema(RECORD)
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["category", "urgency", "note", "sections"]
    assert schema["properties"]["note"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    assert schema["properties"]["category"] == {"type": "string", "enum": ["billing", "tech"]}
    assert schema["properties"]["urgency"] == {"type": "integer", "description": "1 to 5"}
    nested = schema["properties"]["sections"]["items"]
    assert nested["additionalProperties"] is False and nested["required"] == ["title"]


def test_strict_schema_of_an_empty_record_still_lists_required():
    assert t.to_json_schema(t.ObjectType(())) == {
        "type": "object",
        "properties": {},
        "required": [],
        "additionalProperties": False,
    }


def test_tool_schema_keeps_defaults_and_leaves_optional_fields_out_of_required():
    params = t.ObjectType(
        (
            t.FieldType("topic", t.TEXT),
            t.FieldType("limit", t.INT, default=5, has_default=True),
            t.FieldType("tag", t.TEXT, optional=True),
        )
    )
    assert t.to_json_schema(params, strict=False) == {
        "type": "object",
        "properties": {
            "topic": {"type": "string"},
            "limit": {"type": "integer", "default": 5},
            "tag": {"type": "string"},
        },
        "required": ["topic"],
    }


@pytest.mark.parametrize(
    ("typ", "text"),
    [
        (t.TEXT, "string"),
        (t.LiteralType(("a", "b")), '"a" | "b"'),
        (t.ListType(t.INT), "list[int]"),
        (t.OptionalType(t.TEXT), "string?"),
        (RECORD, "object {...}"),
        (t.UnionType((t.TEXT, t.INT)), "string | int"),
    ],
)
def test_describe_writes_types_as_a_spec_does(typ, text):
    assert t.describe(typ) == text


def test_lookup_follows_fields_and_stops_at_the_first_missing_one():
    assert t.lookup(RECORD, ["category"]) == t.LiteralType(("billing", "tech"))
    assert t.lookup(RECORD, ["note"]) == t.OptionalType(t.TEXT)
    assert t.lookup(RECORD, ["sections"]) == t.ListType(t.ObjectType((t.FieldType("title", t.TEXT),)))
    assert t.lookup(RECORD, ["categroy"]) is None
    assert t.lookup(RECORD, ["urgency", "x"]) is None
    assert t.lookup(t.ANY, ["anything", "at", "all"]) == t.ANY


def test_a_union_has_a_field_only_when_every_option_has_it():
    a = t.ObjectType((t.FieldType("x", t.TEXT), t.FieldType("y", t.INT)))
    b = t.ObjectType((t.FieldType("x", t.INT),))
    union = t.union_of([a, b])
    assert t.lookup(union, ["x"]) == t.UnionType((t.TEXT, t.INT))
    assert t.lookup(union, ["y"]) is None
    assert t.field_names(union) == ["x"]


def test_union_of_flattens_and_drops_repeats():
    assert t.union_of([t.TEXT, t.TEXT]) == t.TEXT
    assert t.union_of([t.TEXT, t.UnionType((t.INT, t.TEXT))]) == t.UnionType((t.TEXT, t.INT))
    assert t.union_of([t.TEXT, t.ANY]) == t.ANY


def test_matches_checks_json_values():
    assert t.matches(RECORD, {"category": "tech", "urgency": 3, "sections": [{"title": "x"}]})
    assert not t.matches(RECORD, {"category": "sales", "urgency": 3, "sections": []})
    assert not t.matches(RECORD, {"category": "tech", "urgency": True, "sections": []})
    assert not t.matches(RECORD, {"category": "tech", "urgency": 1, "sections": [], "extra": 1})
    assert not t.matches(t.LiteralType((1,)), True)


def test_spans_do_not_change_equality():
    from plait.core.source import Span

    span = Span("f", 1, 1, 1, 2, 0, 1)
    assert t.LiteralType(("a",), span) == t.LiteralType(("a",))
