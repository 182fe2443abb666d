"""`plait fmt` on plait 0.3 `with` blocks: one line as written when it fits, else one binding per line, aligned;
`with = { a = b }` is written in the block form. Formatting twice changes nothing."""

from __future__ import annotations

import textwrap

from plait.dsl.formatter import format_text


def fmt(text: str) -> str:
    out, diagnostics = format_text(textwrap.dedent(text).lstrip("\n"))
    assert out is not None, diagnostics
    again, _ = format_text(out)
    assert again == out
    return out


def test_a_with_block_on_one_line_stays_and_keys_are_not_aligned_with_it():
    out = fmt(
        """
        step s {
          with { plan: planner.tasks, topic: input.topic }
          model = fast
          prompt = "x"
        }
        """
    )
    assert out.splitlines()[1:4] == [
        "  with { plan: planner.tasks, topic: input.topic }",
        "  model  = fast",
        '  prompt = "x"',
    ]


def test_a_long_or_multi_line_with_block_is_one_binding_per_line():
    out = fmt(
        """
        step s {
          with {
            plan: planner.tasks
            t: input.topic   # why
          }
        }
        """
    )
    lines = out.splitlines()
    assert lines[:3] == ["step s {", "  with {", "    plan: planner.tasks"] and lines[4:] == ["  }", "}"]
    assert lines[3].startswith("    t:    input.topic ") and lines[3].endswith("# why")


def test_the_attribute_form_is_written_as_a_block():
    assert fmt("step s { with = { a = planner, b = input.x } }\n") == "step s { with { a: planner, b: input.x } }\n"
