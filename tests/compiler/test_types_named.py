"""plait 0.3 types (issue 21, item 6): named record types and unions of them, narrowing in route cases, integer
literal unions, `date` and `datetime`, a top-level list or union as an `output`, and a route's output read as
the union of its cases."""

from __future__ import annotations

from checks_helpers import assert_at, clean, codes, compile_text, only

from plait.core import types as t

HEAD = 'plait 0.3\nmodel fast = "openai/gpt-4o-mini"\n'

TYPES = """
type Flight "A flight that can be booked." {
  kind:    "flight"
  number:  string
  stops:   0 | 1 | 2
  departs: datetime
}

type Hotel { kind: "hotel", name: string, night: date }

type Booking = Flight | Hotel
"""


def _output(result, name: str) -> t.Type:
    return result.graph.node(name).output


def test_a_named_type_is_used_as_a_field_an_output_a_list_a_parameter_and_in_another_type(tmp_path):
    text = (
        HEAD
        + TYPES
        + """
type Trip { traveller: string, legs: list[Flight], stay: Hotel?, booked: list[Booking] }

tool book "Book a flight." {
  params { flight: Flight }
  run = python("tools:book")
}

step search {
  model  = fast
  prompt = "Find flights to {{input}}"
  output list[Flight]
}

step plan {
  model  = fast
  prompt = "Plan a trip from {{input}}"
  output Trip
}

step first {
  model  = fast
  prompt = "Flight {{input.legs}} for {{input.traveller}}, at {{input.stay.name}}"
  output { chosen: Flight, why: string }
}

agent booker { model = fast, tools = [book], system = "Book {{input.chosen.number}}" }

chain main = search -> plan -> first -> booker
"""
    )
    result = compile_text(text, tmp_path, files={"tools.py": "def book(flight):\n    return 'ok'\n"})
    clean(result)
    flights = _output(result, "search")
    assert isinstance(flights, t.ListType) and isinstance(flights.item, t.ObjectType)
    assert flights.item.name == "Flight" and [f.name for f in flights.item.fields] == [
        "kind",
        "number",
        "stops",
        "departs",
    ]
    assert t.describe(flights) == "list[Flight]"
    trip = _output(result, "plan")
    assert t.describe(t.lookup(trip, ["legs"])) == "list[Flight]"
    assert t.describe(t.lookup(trip, ["stay"])) == "Hotel?"
    # The tool's parameter is the record's JSON Schema, titled with its name.
    params = result.graph.node("book").parameters
    assert params["properties"]["flight"]["title"] == "Flight"
    assert params["properties"]["flight"]["description"] == "A flight that can be booked."
    assert params["properties"]["flight"]["properties"]["stops"] == {"type": "integer", "enum": [0, 1, 2]}


def test_integer_literal_unions_and_dates_have_their_json_schema(tmp_path):
    text = HEAD + TYPES + 'step pick { model = fast, prompt = "x", output Flight }\n'
    text += 'step book { model = fast, prompt = "x", output Booking }\n'
    result = compile_text(text, tmp_path)
    clean(result)
    schema = t.to_json_schema(_output(result, "pick"))
    assert schema["properties"]["stops"] == {"type": "integer", "enum": [0, 1, 2]}
    assert schema["properties"]["departs"] == {"type": "string", "format": "date-time"}
    assert "title" not in schema  # the strict form a model is asked for carries no title
    assert t.to_json_schema(t.DATE) == {"type": "string", "format": "date"}


def test_date_and_datetime_values_are_checked_as_iso_8601():
    assert t.matches(t.DATE, "2026-12-05")
    assert not t.matches(t.DATE, "2026-13-05")
    assert not t.matches(t.DATE, "2026-12-05T10:00:00")
    assert t.matches(t.DATETIME, "2026-12-05T08:30:00Z")
    assert t.matches(t.DATETIME, "2026-12-05 08:30:00+01:00")
    assert not t.matches(t.DATETIME, "2026-12-05")
    assert not t.matches(t.DATETIME, "tomorrow")
    assert t.matches(t.LiteralType((1, 2, 3)), 2) and not t.matches(t.LiteralType((1, 2, 3)), 4)


def test_an_unknown_type_name_is_p207_with_a_did_you_mean_among_the_spec_s_types(tmp_path):
    text = HEAD + TYPES + 'step search { model = fast, prompt = "x", output list[Flihgt] }\n'
    d = only(compile_text(text, tmp_path), "P207")
    assert d.message == "unknown type `Flihgt`"
    assert d.fix is not None and d.fix.replacement == "Flight"
    assert_at(d, text, "Flihgt")
    d = only(compile_text(HEAD + "type Stay { night: dat }\n", tmp_path), "P207")
    assert d.fix is not None and d.fix.replacement == "date"


def test_a_type_that_contains_itself_is_p210_naming_the_cycle(tmp_path):
    text = HEAD + "type Employee { name: string, team: Team }\ntype Team { lead: Employee? }\n"
    d = only(compile_text(text, tmp_path), "P210")
    assert d.message == "type `Employee` contains itself: Employee → Team → Employee"
    d = only(compile_text(HEAD + "type Part { parts: list[Part] }\n", tmp_path), "P210")
    assert d.message == "type `Part` contains itself: Part → Part"


def test_a_union_of_records_needs_a_discriminating_field(tmp_path):
    text = HEAD + 'type A { kind: "a", x: int }\ntype B { kind: "a", y: int }\ntype AB = A | B\n'
    d = only(compile_text(text, tmp_path), "P211")
    assert d.message.startswith("`A | B` cannot be told apart")
    assert_at(d, text, "A | B")
    text = HEAD + 'type A { kind: "a" }\ntype S = "x" | "y"\ntype AS = A | S\n'
    assert "`S` is not a record" in only(compile_text(text, tmp_path), "P211").message
    clean(compile_text(HEAD + TYPES + 'step pick { model = fast, prompt = "x", output Booking }\n', tmp_path))


def test_a_type_shares_the_spec_s_namespace(tmp_path):
    text = HEAD + 'type triage { x: int }\nstep triage { model = fast, prompt = "x" }\n'
    assert "P102" in codes(compile_text(text, tmp_path))


ROUTED = """
step pick {
  model  = fast
  prompt = "Book what {{input}} asks for."
  output Booking
}

step book_flight { model = fast, prompt = "Book {{input.number}} with {{input.stops}} stops at {{input.departs}}" }
step book_hotel  { model = fast, prompt = "Book {{input.name}} for {{input.night}}" }
"""


def test_a_route_on_the_discriminator_narrows_each_case_to_its_record(tmp_path):
    text = (
        HEAD
        + TYPES
        + ROUTED
        + 'route book on input.kind { "flight" -> book_flight, "hotel" -> book_hotel }\n'
        + "chain main = pick -> book\n"
    )
    clean(compile_text(text, tmp_path))
    # `else` gets the records no case names.
    text = (
        HEAD
        + TYPES
        + ROUTED
        + 'route book on input.kind { "flight" -> book_flight, else -> book_hotel }\n'
        + "chain main = pick -> book\n"
    )
    clean(compile_text(text, tmp_path))


def test_without_narrowing_a_variant_s_field_is_p402(tmp_path):
    text = (
        HEAD
        + TYPES
        + ROUTED
        + 'step after { model = fast, prompt = "{{input.number}} {{input.kind}}" }\n'
        + "chain main = pick -> after\n"
    )
    d = only(compile_text(text, tmp_path), "P402")
    assert "`pick`'s output has no field `number`" in d.message
    assert d.notes[-1] == (
        "it is one of Booking; only Flight declares `number`: a route `on input.kind` gives each case its record,"
        " where the case reads the field"
    )
    # A case that reads the other variant's field is not narrowed to it.
    text = (
        HEAD
        + TYPES
        + ROUTED
        + 'route book on input.kind { "flight" -> book_hotel, "hotel" -> book_flight }\n'
        + "chain main = pick -> book\n"
    )
    assert codes(compile_text(text, tmp_path)).count("P402") == 5


CASES = """
step classify {
  model  = fast
  prompt = "Classify {{input}}"
  output { topic: "x" | "y" }
}
step a {
  model  = fast
  prompt = "A {{input}}"
  output { answer: string, cost: int }
}
step b {
  model  = fast
  prompt = "B {{input}}"
  output { answer: string }
}
route pick on input.topic {
  "x" -> a
  "y" -> b
}
step after { model = fast, prompt = "{{input.cost}} {{input.answer}}" }
chain main = classify -> pick -> after
"""


def test_from_0_3_a_field_only_some_cases_declare_reads_as_optional(tmp_path):
    result = compile_text(HEAD + CASES, tmp_path)
    clean(result)
    assert t.describe(t.lookup(_output(result, "pick"), ["cost"])) == "int?"
    assert t.describe(t.lookup(_output(result, "pick"), ["answer"])) == "string"
    # 0.2 keeps reading only the fields common to all cases.
    old = compile_text(HEAD.replace("plait 0.3", "plait 0.2") + CASES, tmp_path)
    assert "not every case of route `pick` declares it" in only(old, "P402").message


def test_a_route_whose_cases_are_not_all_records_still_reads_only_common_fields(tmp_path):
    text = HEAD + CASES.replace("  output { answer: string }\n", "")
    found = [d.message for d in compile_text(text, tmp_path).diagnostics if d.code == "P402"]
    assert [m.split(" does not")[0] for m in found] == ["`{{input.cost}}`", "`{{input.answer}}`"]


def test_a_changed_named_type_is_a_contract_change_of_each_runnable_that_uses_it(tmp_path):
    from plait.compiler.diff import diff_graphs
    from plait.compiler.pipeline import compile_spec

    spec = HEAD + TYPES + ROUTED + 'route book on input.kind { "flight" -> book_flight, else -> book_hotel }\n'
    spec += 'step search { model = fast, prompt = "x", output list[Flight] }\nchain main = search -> pick -> book\n'
    old = compile_spec(spec, path="old.plait")
    new = compile_spec(spec.replace("  number:  string\n", "  number:  string\n  seat:    string?\n"), path="new.plait")
    assert old.graph is not None and new.graph is not None
    changed = {c.describe() for c in diff_graphs(old.graph, new.graph)}
    assert changed == {
        "~ step search: output changed list[Flight {kind, number, stops, departs}]"
        " → list[Flight {kind, number, seat, stops, departs}]  [contract]",
        "~ step pick: output changed Flight {kind, number, stops, departs} | Hotel {kind, name, night}"
        " → Flight {kind, number, seat, stops, departs} | Hotel {kind, name, night}  [contract]",
    }


def test_a_route_on_an_integer_literal_union_must_cover_it(tmp_path):
    text = (
        HEAD
        + 'step rate { model = fast, prompt = "Rate {{input}}", output { score: 1 | 2 | 3 } }\n'
        + 'step low { model = fast, prompt = "low" }\n'
        + "route r on input.score { 1 -> low, 2 -> low }\nchain main = rate -> r\n"
    )
    assert only(compile_text(text, tmp_path), "P310").message == "route `r` has no case for 3"
    clean(compile_text(text.replace("2 -> low }", "2 -> low, 3 -> low }"), tmp_path))


def test_the_graph_json_names_a_record_by_its_type(tmp_path):
    from plait.core.graph import record_json

    result = compile_text(HEAD + TYPES + 'step search { model = fast, prompt = "x", output list[Flight] }\n', tmp_path)
    output = record_json(result.graph.node("search"))["output"]
    assert output["type"] == "array" and output["items"]["title"] == "Flight"
    assert output["items"]["properties"]["departs"] == {"type": "string", "format": "date-time"}


def test_a_route_on_a_date_takes_dates_as_its_cases(tmp_path):
    text = (
        HEAD
        + 'step when { model = fast, prompt = "When? {{input}}", output { day: date } }\n'
        + 'step party { model = fast, prompt = "party" }\nstep work { model = fast, prompt = "work" }\n'
        + 'route r on input.day { "2026-12-25" -> party, else -> work }\nchain main = when -> r\n'
    )
    clean(compile_text(text, tmp_path))
    bad = only(compile_text(text.replace('"2026-12-25"', '"Christmas"'), tmp_path), "P309")
    assert bad.message == 'case "Christmas" is not a value of `input.day`, which is `date`'


def test_a_type_nothing_names_is_p601(tmp_path):
    text = HEAD + TYPES + 'step pick { model = fast, prompt = "x", output list[Flight] }\n'
    d = only(compile_text(text, tmp_path), "P601")
    assert d.message == "type `Booking` is never used" and d.severity == "warning"
    assert_at(d, text, "Booking =")
    # Hotel is used by Booking, even though Booking is not used.
    # A misspelt use is P207 alone: the type it meant is not reported unused as well.
    text = HEAD + 'type Flight { number: string }\nstep pick { model = fast, prompt = "x", output list[Fligt] }\n'
    assert codes(compile_text(text, tmp_path)) == ["P207"]


def test_type_stays_a_name_everywhere_a_0_2_spec_could_use_it(tmp_path):
    text = """plait 0.2
model fast = "openai/gpt-4o-mini"
step type {
  model  = fast
  prompt = "Classify {{input}}"
  output { type: "a" | "b", kind: string }
}
step a { model = fast, prompt = "A {{input.kind}} {{type.type}}" }
step b { model = fast, prompt = "B" }
route pick on input.type { "a" -> a, "b" -> b }
tool t "Look." { params { type: string = "q" }, run = http(GET, "https://example.com/?t={{type}}") }
agent helper { model = fast, tools = [t] }
chain main = type -> pick -> helper
"""
    clean(compile_text(text, tmp_path))
