"""The editor and plait 0.3 named types: hover shows a type's declaration, completion offers the built-in and
the spec's types where a type is written, and references and rename reach every place a type is named."""

from __future__ import annotations

from plait.compiler.pipeline import compile_spec
from plait.ide import analysis as ide
from plait.ide.complete import complete
from plait.ide.refs import references, rename, target_at
from plait.ide.workspace import Workspace

SPEC = """plait 0.3
model fast = "openai/gpt-4o-mini"

type Flight "A flight that can be booked." {
  kind:    "flight"
  number:  string
}

type Hotel { kind: "hotel", name: string }

type Booking = Flight | Hotel

step search {
  model  = fast
  prompt = "Flights to {{input}}"
  output list[Flight]
}

step pick {
  model  = fast
  prompt = "Pick from {{search}}"
  output { booking: Booking, backup: Flight? }
}

chain main = search -> pick
"""


def test_hover_on_a_type_name_shows_its_declaration():
    shown = ide.analyse(SPEC, "spec.plait").hover(SPEC.index("list[Flight]") + 6)
    assert shown is not None
    assert "type Flight" in shown and "A flight that can be booked." in shown and "number:  string" in shown
    union = ide.analyse(SPEC, "spec.plait").hover(SPEC.index("booking: Booking") + 10)
    assert union is not None and "= Flight | Hotel" in union


def test_completion_offers_types_where_a_type_is_written(project):
    path = project("spec.plait", SPEC).resolve()
    ws = Workspace()
    ws.set(path, SPEC)
    declared = ws.project().declared(path)

    def at(typed: str) -> list[str]:
        text = SPEC + typed
        return [c.label for c in complete(text, len(text), declared, ws.project().seen_modules(path))]

    for typed in ("step s {\n  output { when: ", "step s {\n  output ", "type Trip { legs: list[", "type T = "):
        labels = at(typed)
        assert {"string", "date", "datetime", "Flight", "Hotel", "Booking"} <= set(labels), (typed, labels)
    assert "Flight" not in at("step s {\n  model = ")
    # A field of a named record, after `NAME.` in a template.
    assert "booking" in at('step s {\n  model = fast\n  prompt = "{{pick.')


def test_references_and_rename_of_a_type_reach_every_use(project):
    path = project("spec.plait", SPEC).resolve()
    ws = Workspace((path.parent,))
    target = target_at(ws.project(), path, SPEC.index("type Flight") + 6)
    assert target is not None and target.declaration.kind == "type"
    found = references(ws.project(), target)
    lines = sorted(occ.span.line for _, occ in found)
    assert lines == [4, 11, 16, 22]  # its declaration, the union, the list, the optional field
    edits = rename(ws.project(), path, SPEC.index("type Flight") + 6, "Leg")
    text = SPEC
    for occ, new in sorted(edits[path], key=lambda item: -item[0].span.offset):
        text = text[: occ.span.offset] + new + text[occ.span.end_offset :]
    assert "Flight " not in text and "list[Leg]" in text and "backup: Leg?" in text
    path.write_text(text)
    assert compile_spec(path).ok
