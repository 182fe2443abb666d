"""plait 0.3 types, the loose ends (issue 21): an ask's `answer TYPE` (a named record, a union, a list) typed as an
`output TYPE` is; a route on a union's discriminator read by name (`on pick.kind`), in `state`
(`on state.last.kind`) or in the run's input narrows what each case reads there, as `on input.kind` narrows its
input; a default on a field of a type used as an output (P212)."""

from __future__ import annotations

from checks_helpers import assert_at, clean, codes, compile_text, only

from plait.core import types as t

HEAD = 'plait 0.3\nmodel fast = "openai/gpt-4o-mini"\n'

TYPES = """
type Flight { kind: "flight", number: string }
type Hotel { kind: "hotel", name: string }
type Booking = Flight | Hotel
"""


def test_an_ask_s_answer_may_be_a_named_union_narrowed_by_a_route_on_its_discriminator(tmp_path):
    text = (
        HEAD
        + TYPES
        + """
ask pick "Which booking for {{input}}?" { answer Booking }
step book_flight { model = fast, prompt = "Book flight {{input.number}}" }
step book_hotel { model = fast, prompt = "Book hotel {{input.name}}" }
route book on input.kind { "flight" -> book_flight, "hotel" -> book_hotel }
chain main = pick -> book
"""
    )
    result = compile_text(text, tmp_path)
    clean(result)
    ask = result.graph.node("pick")
    assert t.describe(ask.output) == "Booking"
    assert [o["title"] for o in ask.answer["anyOf"]] == ["Flight", "Hotel"]
    # Unnarrowed, a variant's field is P402, as for an `output Booking`.
    wrong = text.replace("Book hotel {{input.name}}", "Book hotel {{input.number}}")
    d = only(compile_text(wrong, tmp_path), "P402")
    assert "`pick`'s output has no field `number`" in d.message


def test_an_ask_s_answer_may_be_a_list_of_records(tmp_path):
    text = (
        HEAD
        + """
type Flight { kind: "flight", number: string }
ask legs "Which flights?" { answer list[Flight] }
step each { model = fast, prompt = "Check {{input.number}}" }
map check = each { over = input, max_items = 5 }
chain main = legs -> check
"""
    )
    result = compile_text(text, tmp_path)
    clean(result)
    assert result.graph.node("legs").answer["type"] == "array"
    bad = text.replace("Check {{input.number}}", "Check {{input.name}}")
    assert codes(compile_text(bad, tmp_path)) == ["P402"]


ROUTED = """
step pick { model = fast, prompt = "Pick for {{input}}", output Booking }
step book_flight { model = fast, prompt = "Book flight {{pick.number}} ({{ pick.number | upper }})" }
step book_hotel { model = fast, prompt = "Book hotel {{pick.name}}" }
"""


def test_a_route_on_a_runnable_s_discriminator_narrows_reads_of_it_in_each_case(tmp_path):
    text = (
        HEAD
        + TYPES
        + ROUTED
        + """
step intro { model = fast, prompt = "Say hello to {{input}}" }
route book on pick.kind { "flight" -> book_flight, else -> book_hotel }
chain main = pick -> intro -> book
"""
    )
    clean(compile_text(text, tmp_path))
    # A case reading the other record's field is still P402, at its path, naming the record it has there.
    wrong = text.replace("Book hotel {{pick.name}}", "Book hotel {{pick.number}}")
    d = only(compile_text(wrong, tmp_path), "P402")
    assert_at(d, wrong, "pick.number", 3)
    assert d.notes[0] == "its fields are `kind`, `name`"
    # Outside the route nothing is narrowed, and the note says how to narrow the path that was read.
    outside = text.replace("Say hello to {{input}}", "Say hello to {{pick.number}}")
    d = only(compile_text(outside, tmp_path), "P402")
    assert d.notes[-1] == (
        "it is one of Booking; only Flight declares `number`: a route `on pick.kind` gives each case its record,"
        " where the case reads the field"
    )


def test_narrowing_reaches_every_element_of_a_case_and_its_with(tmp_path):
    text = (
        HEAD
        + TYPES
        + """
step pick { model = fast, prompt = "Pick for {{input}}", output Booking }
step note { model = fast, prompt = "Note {{pick.number}}" }
step confirm { with { number: pick.number }, model = fast, prompt = "Confirm {{input.number}}" }
step book_hotel { model = fast, prompt = "Book hotel {{pick.name}}" }
chain flight = note -> confirm
route book on pick.kind { "flight" -> flight, "hotel" -> book_hotel }
chain main = pick -> book
"""
    )
    clean(compile_text(text, tmp_path))


def test_a_route_on_a_state_key_s_discriminator_narrows_reads_of_that_key(tmp_path):
    text = (
        HEAD
        + TYPES
        + """
state { last: Booking? }
step start { model = fast, prompt = "Start {{input}}" }
step again_flight { model = fast, prompt = "Again {{state.last.number}}" }
step again_hotel { model = fast, prompt = "Again {{state.last.name}}" }
route again on state.last.kind { "flight" -> again_flight, "hotel" -> again_hotel }
chain main = start -> again
"""
    )
    clean(compile_text(text, tmp_path))
    wrong = text.replace("Again {{state.last.name}}", "Again {{state.last.number}}")
    d = only(compile_text(wrong, tmp_path), "P402")
    assert "`state.last` has no field `number`" in d.message


def test_a_route_on_the_run_s_input_narrows_reads_of_it(tmp_path):
    text = (
        HEAD
        + TYPES
        + """
input { booking: Booking }
step start { model = fast, prompt = "Start {{input}}" }
step for_flight { model = fast, prompt = "{{run.input.booking.number}}" }
step for_hotel { model = fast, prompt = "{{run.input.booking.name}}" }
route go on run.input.booking.kind { "flight" -> for_flight, "hotel" -> for_hotel }
chain main = start -> go
"""
    )
    clean(compile_text(text, tmp_path))
    assert codes(compile_text(text.replace("booking.name}}", "booking.number}}"), tmp_path)) == ["P402"]


def test_a_default_in_a_named_type_a_reply_uses_is_p209_at_the_field(tmp_path):
    text = (
        HEAD
        + """
type Leg { number: string, stops: int = 0 }
type Trip { legs: list[Leg], note: string = "none" }
tool book "Book a leg." {
  params { leg: Leg }
  run = http("https://example.com/book")
}
step plan { model = fast, prompt = "Plan {{input}}", output Trip }
ask confirm "Which legs?" { answer list[Leg] }
chain main = plan -> confirm
"""
    )
    found = [d for d in compile_text(text, tmp_path).diagnostics if d.code == "P209"]
    # Each defaulted field once, at its declaration, naming the first reply that uses it.
    assert [d.message for d in found] == [
        "field `stops` of type `Leg` has a default, and the `output` of `plan` uses it",
        "field `note` of type `Trip` has a default, and the `output` of `plan` uses it",
    ]
    assert_at(found[0], text, "stops")
    assert_at(found[1], text, "note")
    # Used only as a tool's parameter, a default is what the tool receives: nothing to report.
    params_only = text.replace("output Trip", "output { legs: list[string] }").replace("answer list[Leg]", "")
    params_only = params_only.replace('type Trip { legs: list[Leg], note: string = "none" }\n', "")
    params_only = params_only.replace('"Which legs?" { }', '"Which legs?"')
    assert "P209" not in codes(compile_text(params_only, tmp_path))


def test_a_test_s_answer_to_a_union_ask_is_checked_against_the_whole_type(tmp_path):
    text = (
        HEAD.replace("openai/gpt-4o-mini", "scripted/m")
        + TYPES
        + """
ask pick "Which booking?" { answer Booking }
chain main = pick
test hotel {
  answers = { pick = { kind = "hotel", name = "Ritz" } }
  expect output.kind == "hotel"
}
"""
    )
    assert "P701" not in codes(compile_text(text, tmp_path))
    wrong = text.replace('name = "Ritz"', 'number = "Ritz"')
    d = only(compile_text(wrong, tmp_path), "P701")
    assert d.message == "the answer for `pick` does not fit its `answer` (Booking)"


def test_a_changed_answer_type_is_a_contract_change_of_the_ask(tmp_path):
    from plait.compiler.diff import diff_graphs
    from plait.compiler.pipeline import compile_spec

    spec = HEAD + TYPES + 'ask pick "Which booking?" { answer Booking }\nchain main = pick\n'
    old = compile_spec(spec, path="old.plait")
    new = compile_spec(spec.replace("name: string }", "name: string, nights: int }"), path="new.plait")
    assert old.graph is not None and new.graph is not None
    change = (
        "output changed Flight {kind, number} | Hotel {kind, name} → Flight {kind, number} | Hotel {kind, name, nights}"
    )
    # The chain that ends with the ask answers the same type, so its output changes too.
    assert {c.describe() for c in diff_graphs(old.graph, new.graph)} == {
        f"~ ask pick: {change}  [contract]",
        f"~ chain main: {change}  [contract]",
    }
