"""Flow checks the plait 0.3 work found wanting (issue 21's defects): route case types, P402's rule and place,
reads of an enclosing loop, P201's attribute lists."""

from __future__ import annotations

from checks_helpers import assert_at, compile_text, only

HEAD = 'plait 0.2\nmodel fast = "openai/gpt-4o-mini"\n'


def test_a_route_case_of_the_wrong_type_for_an_open_subject_is_reported(tmp_path):
    text = (
        HEAD
        + """
step classify {
  model  = fast
  prompt = "Classify {{input}}"
  output { topic: string, score: int }
}
step a { model = fast, prompt = "A {{input}}" }
step b { model = fast, prompt = "B {{input}}" }
route pick on input.topic {
  1    -> a
  "x"  -> a
  else -> b
}
route rank on input.score {
  2     -> a
  "two" -> a
  else  -> b
}
chain main = classify -> parallel(pick, rank)
"""
    )
    found = [d for d in compile_text(text, tmp_path).diagnostics if d.code == "P309"]
    assert [d.message for d in found] == [
        "case 1 is not a value of `input.topic`, which is `string`",
        'case "two" is not a value of `input.score`, which is `int`',
    ]
    assert_at(found[0], text, "1    ->")


ROUTE = """
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
"""


def test_p402_after_a_route_names_the_common_fields_rule_and_points_at_the_case(tmp_path):
    text = (
        HEAD
        + ROUTE
        + 'step after { model = fast, prompt = "{{input.cost}}" }\nchain main = classify -> pick -> after\n'
    )
    d = only(compile_text(text, tmp_path), "P402")
    assert d.message == (
        "`{{input.cost}}` does not resolve: `pick`'s output has no field `cost`: not every case of route `pick`"
        " declares it"
    )
    assert "fields common to all its cases: `answer`" in d.notes[0]
    case = next(label for label in d.labels if "declares no `cost`" in label.message)
    assert (case.span.line, case.span.column) == (text.count("\n", 0, text.index('"y" -> b')) + 1, 3)


def test_a_loop_until_on_a_route_body_names_the_rule_and_points_at_the_case(tmp_path):
    text = HEAD + ROUTE + "loop again = classify -> pick { max_iterations = 2, until = cost == 1 }\n"
    d = only(compile_text(text, tmp_path), "P313")
    assert "fields common to all its cases: `answer`" in d.notes[0]
    assert [label.message for label in d.labels] == ["`b` declares no `cost` in its `output`"]


def test_reading_a_loop_by_name_in_its_own_body(tmp_path):
    text = (
        HEAD
        + """
step review {
  model = fast
  prompt = "{{outer.iteration}} {{outer.last.done}} {{outer.history}} {{outer.last}} {{outer.done}} {{outer}}"
  output { done: bool }
}
loop outer = review { max_iterations = 2, until = done }
"""
    )
    found = [
        (d.code, d.message, d.fix.replacement if d.fix else None) for d in compile_text(text, tmp_path).diagnostics
    ]
    assert found == [
        (
            "P316",
            "`{{outer.done}}` reads loop `outer` inside its own body, where it has not finished",
            "outer.last.done",
        ),
        ("P316", "`{{outer}}` reads loop `outer` inside its own body, where it has not finished", "outer.last"),
    ]


def test_p201_lists_an_agents_and_a_steps_output_block(tmp_path):
    text = HEAD + 'agent a { model = fast, outptu = 1 }\nstep s { model = fast, prompt = "x", bogus = 1 }\n'
    found = [d for d in compile_text(text, tmp_path).diagnostics if d.code == "P201"]
    assert [d.notes[0].endswith("`output { ... }`") for d in found] == [True, True]
    assert found[0].fix.message == "did you mean `output { ... }`?"
