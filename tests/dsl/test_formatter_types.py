"""`plait fmt` on plait 0.3 types: `type` declarations (a record, on one line as written when it fits, else one
field per line, aligned; a union of names), integer literal unions and `output TYPE`. Formatting twice changes
nothing, and what it writes parses to the same declarations."""

from __future__ import annotations

import textwrap

from plait.dsl.formatter import format_text


def fmt(text: str) -> str:
    out, diagnostics = format_text(textwrap.dedent(text).lstrip("\n"))
    assert out is not None, diagnostics
    again, _ = format_text(out)
    assert again == out
    return out


def test_type_declarations_keep_their_layout_and_align_their_fields():
    out = fmt(
        """
        plait 0.3
        type Flight "A flight" {
          kind: "flight"
          number: string   # as printed on the ticket
          stops: 0|1|2
          departs: datetime
        }
        type Hotel {kind: "hotel", name: string, night: date}
        type Booking =   Flight|Hotel
        """
    )
    assert out == textwrap.dedent(
        """\
        plait 0.3

        type Flight "A flight" {
          kind:    "flight"
          number:  string                           # as printed on the ticket
          stops:   0 | 1 | 2
          departs: datetime
        }

        type Hotel { kind: "hotel", name: string, night: date }
        type Booking = Flight | Hotel
        """
    )


def test_an_output_that_is_one_type_is_written_after_its_keyword():
    out = fmt(
        """
        step search {
          model = fast
          prompt = "x"
          output   list[ Flight ]
        }
        step pick { model = fast, prompt = "x", output Booking? }
        """
    )
    assert "  output list[Flight]\n" in out
    assert 'step pick { model = fast, prompt = "x", output Booking? }' in out


def test_an_answer_that_is_one_type_is_written_after_its_keyword():
    out = fmt(
        """
        ask pick "Which?" {
          answer    Booking
        }
        ask legs "Which flights?" { answer list[ Flight ] }
        """
    )
    assert 'ask pick "Which?" {\n  answer Booking\n}\n' in out
    assert 'ask legs "Which flights?" { answer list[Flight] }' in out
