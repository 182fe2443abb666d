"""Hover on a field inside a path (issue 21): `tasks` in `{{plan.tasks}}`, or inside an expression, shows the
field's type and description, as hover on the head name shows its declaration; through named types, a chain's
last element, `run.input...`, `state...` and `input...` (what arrives where the runnable is placed)."""

from __future__ import annotations

from plait.ide import analysis as ide

SPEC = """plait 0.3

model fast = "openai/gpt-4o-mini"

type Task { title: string "What to write", words: int? "How long" }

input { topic: string "What the report is about" }

state { notes: list[string] "What the tools noted" }

step plan {
  model  = fast
  prompt = "Plan {{run.input.topic}}"
  output { tasks: list[Task] "The sections, in order", urgent: bool }
}

step intro {
  model  = fast
  prompt = "Intro for {{input}}"
  output { first: Task }
}

chain prepare = plan -> intro

step draft {
  model  = fast
  prompt = "Write {{plan.tasks}} ({{ len(plan.tasks) }} of them, {{ 'quick' if plan.urgent else '' }}), from {{prepare.first.title}} and {{state.notes}}"
}

chain main = prepare -> draft
"""


def hover(needle: str, nth: int = 1, into: int = 0) -> str | None:
    at = -1
    for _ in range(nth):
        at = SPEC.index(needle, at + 1)
    return ide.analyse(SPEC, "spec.plait").hover(at + into)


def test_hover_on_a_field_of_a_plain_path_shows_its_type_and_description():
    shown = hover("plan.tasks}}", into=len("plan.t"))
    assert shown is not None
    assert "```plait\nplan.tasks: list[Task]\n```" in shown
    assert "The sections, in order" in shown
    # The head still shows the step, not the field.
    head = hover("plan.tasks}}", into=1)
    assert head is not None and "step plan" in head and "plan.tasks:" not in head


def test_hover_on_a_field_inside_an_expression():
    shown = hover("len(plan.tasks)", into=len("len(plan.ta"))
    assert shown is not None and "plan.tasks: list[" in shown and "The sections, in order" in shown
    urgent = hover("if plan.urgent", into=len("if plan.u"))
    assert urgent is not None and "plan.urgent: bool" in urgent


def test_hover_through_a_chain_a_named_type_the_run_s_input_and_state():
    title = hover("prepare.first.title", into=len("prepare.first.ti"))
    assert title is not None and "prepare.first.title: string" in title and "What to write" in title
    first = hover("prepare.first.title", into=len("prepare.fi"))
    assert first is not None and "prepare.first: Task" in first
    topic = hover("run.input.topic", into=len("run.input.to"))
    assert topic is not None and "run.input.topic: string" in topic and "What the report is about" in topic
    notes = hover("state.notes", into=len("state.no"))
    assert notes is not None and "state.notes: list[string]" in notes and "What the tools noted" in notes


PLACED = """plait 0.3

model fast = "openai/gpt-4o-mini"

step sort {
  model  = fast
  prompt = "Sort {{input}}"
  output { category: "billing" | "tech", summary: string "One line on the case" }
}

step answer {
  model  = fast
  prompt = "Answer: {{input.summary}}"
}

step tag {
  model  = fast
  prompt = "Tag {{input.summary}}"
}

step count {
  model  = fast
  prompt = "Count {{input}}"
  output { summary: int "A count, here" }
}

chain main = sort -> answer
chain twice = sort -> tag
chain also = count -> tag
"""


def _placed(needle: str, into: int) -> str | None:
    return ide.analyse(PLACED, "placed.plait").hover(PLACED.index(needle) + into)


def test_hover_on_a_field_of_input_shows_what_arrives_where_the_runnable_is_placed():
    shown = _placed("{{input.summary}}", len("{{input.su"))
    assert shown is not None and "```plait\ninput.summary: string\n```" in shown and "One line on the case" in shown
    # The head is the runnable's input, not a declaration: nothing to say of `input` itself here.
    assert "step" not in (_placed("{{input.summary}}", len("{{in")) or "")


def test_hover_on_input_in_a_runnable_placed_twice_shows_each_place():
    shown = _placed("Tag {{input.summary}}", len("Tag {{input.su"))
    assert shown is not None and "Placed in 2 places" in shown
    assert "input.summary: string" in shown and "input.summary: int" in shown and "A count, here" in shown
    assert "error" not in shown  # the spec checks clean: each place has the field


def test_completion_offers_types_after_an_ask_s_answer(tmp_path):
    from plait.ide.complete import complete
    from plait.ide.workspace import Workspace

    path = (tmp_path / "spec.plait").resolve()
    path.write_text(SPEC)
    ws = Workspace()
    ws.set(path, SPEC)
    text = SPEC + 'ask pick "Which?" {\n  answer '
    found = complete(text, len(text), ws.project().declared(path), ws.project().seen_modules(path))
    assert {"string", "Task"} <= {c.label for c in found}


def test_hover_on_a_path_written_as_a_value_a_route_subject_and_a_maps_over():
    text = (
        PLACED
        + """
route pick on input.category {
  "billing" -> answer
  else      -> tag
}

map each = answer { over = sort.summary }

chain routed = sort -> pick
"""
    )
    analysed = ide.analyse(text, "placed.plait")
    subject = analysed.hover(text.index("on input.category") + len("on input.cat"))
    assert subject is not None and 'input.category: "billing" | "tech"' in subject
    over = analysed.hover(text.index("over = sort.summary") + len("over = sort.su"))
    assert over is not None and "sort.summary: string" in over and "One line on the case" in over
