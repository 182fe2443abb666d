"""plait 0.3 types at run time (issue 21, item 6): a top-level list or union as an `output` (asked on the wire
as `{"value": ...}`, accepted bare or wrapped), `date`/`datetime` checked, a route on a union's discriminator,
and a field only some of a route's cases declare read as null."""

from __future__ import annotations

from typing import Any

import plait
from plait.runtime.engine import Engine
from spec_helpers import run_seeing, write_spec

TYPES = """
plait 0.3
type Flight { kind: "flight", number: string, stops: 0 | 1 | 2, departs: datetime }
type Hotel  { kind: "hotel", name: string, night: date }
type Booking = Flight | Hotel
"""

FLIGHT = {"kind": "flight", "number": "LH 400", "stops": 0, "departs": "2026-12-05T08:30:00Z"}
HOTEL = {"kind": "hotel", "name": "Ritz", "night": "2026-12-06"}


def _schemas(spec: Any, input: Any) -> tuple[Any, list[Any]]:
    """(the run's result, the output_schema each model request carried)."""
    engine = Engine.from_spec(spec)
    sent: list[Any] = []
    provider = engine._make_provider("m")
    for_run = provider.for_run

    def spied(**options: Any) -> Any:
        view = for_run(**options)
        original = view.complete

        async def spy(request: Any) -> Any:
            sent.append(request.output_schema)
            return await original(request)

        view.complete = spy
        return view

    provider.for_run = spied
    return plait.run(engine, input, raise_on_error=False), sent


LIST = (
    TYPES
    + """
step search { model = m, prompt = "Flights to {{input}}", output list[Flight] }
step describe { model = m, prompt = "{{input.number}} leaves at {{input.departs}} with {{input.stops}} stops" }
map each = describe { over = input, concurrency = 1 }
chain main = search -> each
"""
)


def test_a_top_level_list_output_is_asked_for_wrapped_and_read_as_the_list(tmp_path):
    second = dict(FLIGHT, number="BA 1", stops=1)
    spec = write_spec(
        tmp_path,
        LIST,
        {"search": [{"output": [FLIGHT, second]}], "describe": [{"text": "one"}, {"text": "two"}]},
    )
    result, schemas = _schemas(spec, "Paris")
    assert result.error is None and result.output == ["one", "two"]
    wire = schemas[0]
    assert wire["type"] == "object" and wire["required"] == ["value"]
    assert wire["properties"]["value"]["type"] == "array"
    assert wire["properties"]["value"]["items"]["properties"]["departs"] == {"type": "string", "format": "date-time"}
    assert schemas[1] is None  # a text step asks for nothing


def test_an_answer_in_the_wrapped_form_is_unwrapped(tmp_path):
    spec = write_spec(
        tmp_path,
        LIST,
        {"search": [{"text": '{"value": [%s]}' % __import__("json").dumps(FLIGHT)}], "describe": [{"text": "one"}]},
    )
    result, seen = run_seeing(spec, "Paris")
    assert result.error is None and result.output == ["one"]
    assert seen[1] == ("describe", "LH 400 leaves at 2026-12-05T08:30:00Z with 0 stops")


def test_a_date_that_is_not_iso_8601_is_output_invalid(tmp_path):
    spec = write_spec(tmp_path, LIST, {"search": [{"output": [dict(FLIGHT, departs="next Tuesday")]}]})
    result = plait.run(spec, "Paris", raise_on_error=False)
    assert result.error.kind == "output_invalid"
    assert "'next Tuesday' is not a 'date-time'" in result.error.message
    spec = write_spec(tmp_path, LIST, {"search": [{"output": [dict(FLIGHT, stops=3)]}]})
    assert plait.run(spec, "Paris", raise_on_error=False).error.kind == "output_invalid"


ROUTED = (
    TYPES
    + """
step pick { model = m, prompt = "Book for {{input}}", output Booking }
step book_flight { model = m, prompt = "Flight {{input.number}}" }
step book_hotel  { model = m, prompt = "Hotel {{input.name}} on {{input.night}}" }
route book on input.kind { "flight" -> book_flight, "hotel" -> book_hotel }
chain main = pick -> book
"""
)


def test_a_union_output_routes_on_its_discriminator_to_the_case_that_reads_its_record(tmp_path):
    spec = write_spec(tmp_path, ROUTED, {"pick": [{"output": HOTEL}], "book_hotel": [{"text": "booked"}]})
    result, seen = run_seeing(spec, "Ann")
    assert result.error is None and result.output == "booked"
    assert seen[-1] == ("book_hotel", "Hotel Ritz on 2026-12-06")
    spec = write_spec(tmp_path, ROUTED, {"pick": [{"output": FLIGHT}], "book_flight": [{"text": "flown"}]})
    result, seen = run_seeing(spec, "Ann")
    assert result.output == "flown" and seen[-1] == ("book_flight", "Flight LH 400")


def test_a_code_step_returning_a_list_is_checked_against_its_output(tmp_path):
    body = TYPES + 'step search { run = python("steps:search"), output list[Flight] }\n'
    steps = f"def search(input):\n    return [{FLIGHT!r}]\n"
    spec = write_spec(tmp_path, body, [], **{"steps.py": steps})
    assert plait.run(spec, "x", raise_on_error=False).output == [FLIGHT]
    bad = f"def search(input):\n    return [{dict(FLIGHT, departs='2026-12-05')!r}]\n"
    # Another module name: the first one stays imported for the rest of the process.
    spec = write_spec(tmp_path, body.replace("steps:", "bad_steps:"), [], **{"bad_steps.py": bad})
    assert plait.run(spec, "x", raise_on_error=False).error.kind == "output_invalid"


PARTIAL = """
plait 0.3
step classify { model = m, prompt = "Classify {{input}}", output { topic: "x" | "y" } }
step a { model = m, prompt = "A", output { answer: string, cost: int } }
step b { model = m, prompt = "B", output { answer: string } }
route pick on input.topic { "x" -> a, "y" -> b }
step after { model = m, prompt = "cost={{input.cost}} answer={{input.answer}}" }
chain main = classify -> pick -> after
"""


def test_a_field_only_another_case_declares_reads_as_empty_after_the_route(tmp_path):
    replies = {
        "classify": [{"output": {"topic": "y"}}],
        "b": [{"output": {"answer": "fine"}}],
        "after": [{"text": "done"}],
    }
    result, seen = run_seeing(write_spec(tmp_path, PARTIAL, replies), "q")
    assert result.error is None and result.output == "done"
    assert seen[-1] == ("after", "cost= answer=fine")


def test_a_reply_that_misses_its_union_names_what_its_record_lacks(tmp_path):
    spec = write_spec(tmp_path, ROUTED, {"pick": [{"output": dict(HOTEL, night="2026-13-06")}]})
    result = plait.run(spec, "Ann", raise_on_error=False)
    assert result.error.kind == "output_invalid"
    assert "$.night: '2026-13-06' is not a 'date'" in result.error.message
    assert "any of the given schemas" not in result.error.message
    spec = write_spec(tmp_path, ROUTED, {"pick": [{"output": {"kind": "flight", "number": "LH 1"}}]})
    message = plait.run(spec, "Ann", raise_on_error=False).error.message
    assert "field `stops` is missing" in message and "field `night`" not in message
