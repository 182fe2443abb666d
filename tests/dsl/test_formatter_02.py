"""`plait fmt` on plait 0.2's constructs (the whole layout is in the v02 golden;
these pin the rules a reader relies on)."""

from __future__ import annotations

import pytest

from plait.dsl.formatter import format_text


def fmt(text: str) -> str:
    out, diagnostics = format_text(text)
    assert not diagnostics
    again, _ = format_text(out)
    assert again == out, "not idempotent"
    return out


@pytest.mark.parametrize(
    "written, canonical",
    [
        ("agent a { until = a and (b or c) }", "agent a { until = a and (b or c) }"),
        ("agent a { until = (a and b) or c }", "agent a { until = (a and b) or c }"),
        ("agent a { until = a and b or c }", "agent a { until = (a and b) or c }"),
        ("agent a { until = ((a)) }", "agent a { until = a }"),
        ("agent a { until = a and (b and c) }", "agent a { until = a and (b and c) }"),
        ("agent a { until = not (a == 1) }", "agent a { until = not a == 1 }"),
        ("agent a { until = not (a or b) }", "agent a { until = not (a or b) }"),
        ('agent a { until = verdict=="accept" }', 'agent a { until = verdict == "accept" }'),
        ("agent a { until = (a == 1) == true }", "agent a { until = (a == 1) == true }"),
    ],
)
def test_conditions_keep_their_meaning_with_few_parentheses(written, canonical):
    assert fmt(written) == canonical + "\n"


def test_one_line_typed_blocks_and_routes_stay_on_one_line_when_written_so():
    text = 'step s { model = m, output { a: int, b: "x" | "y" } }\nroute r on input.a { 1 -> s, else -> t }\n'
    assert fmt(text) == text.replace("\nroute", "\n\nroute")


def test_typed_blocks_written_over_lines_stay_expanded_and_aligned():
    text = 'ask q "Ok?" {\n  answer {\n    ok: bool\n    note: string?\n  }\n}\n'
    assert fmt(text) == 'ask q "Ok?" {\n  answer {\n    ok:   bool\n    note: string?\n  }\n}\n'


def test_a_route_case_written_as_a_block_string_over_lines_is_kept_as_written():
    # It was formatted with an empty label (` -> b`), text that does not parse, so fmt refused with exit 2.
    text = 'route r on input.c {\n  """multi\nline""" -> b\n  else -> s\n}\n'
    out = fmt(text)
    assert '  """multi\nline""" -> b\n' in out


def test_route_cases_align_their_arrows_and_keep_comments():
    text = 'route r on input.c {  # why\n  "billing" -> b\n  # rest\n  else -> s\n}\n'
    assert (
        fmt(text)
        == 'route r on input.c {                        # why\n  "billing" -> b\n  # rest\n  else      -> s\n}\n'
    )


def test_loop_and_map_bodies_join_on_the_arrow_line_when_they_fit():
    text = "loop l = a\n  -> b {\n  max_iterations = 2\n}\nmap m = w { over = input.items }\n"
    assert fmt(text) == "loop l = a -> b {\n  max_iterations = 2\n}\n\nmap m = w { over = input.items }\n"


def test_paths_sizes_and_path_succeeded_are_written_as_given():
    text = "agent a { tools = [files.read, x], until = files.write succeeded, cap = 512KB }\n"
    assert fmt(text) == text


def test_input_and_state():
    text = 'input {\n  ticket: string "The message"\n  n: int = 3\n}\nstate { id: string? }\n'
    assert fmt(text) == 'input {\n  ticket: string "The message"\n  n:      int = 3\n}\n\nstate { id: string? }\n'
