"""Template expressions at run time (`{{ len(docs) }}`, `{{ x | default("") }}`, `{{ "A" in reply }}`): what a
model is sent, in a sandbox, with absent values read as the reference says; a plain `{{path}}` is unchanged."""

from __future__ import annotations

import pytest

from plait.runtime.errors import AgentError
from plait.runtime.templates import render
from spec_helpers import run_seeing, write_spec

SPEC = """
plait 0.2
input { topic: string, n: int }
step plan {
  model  = m
  prompt = "plan {{run.input.topic}}"
  output { tasks: list[string], urgent: bool, note: string? }
}
step draft {
  model  = m
  prompt = "draft {{ plan.tasks | join(' + ') }} ({{ len(plan.tasks) }} of {{ run.input.n * 2 + 1 }}){{ ' now!' if plan.urgent else '' }} note={{ plan.note | default('none') }} after [{{ loop.last.feedback | default('first try') }}] {{ plan.tasks | tojson }}"
}
step review {
  model  = m
  prompt = "review {{input}} approved={{ 'APPROVED' in input }} round={{ loop.iteration }}"
  output { feedback: string, done: bool }
}
loop polish = draft -> review { max_iterations = 3, until = done == true }
chain main = plan -> polish
"""

REPLIES = [
    {"output": {"tasks": ["a", "é"], "urgent": True}},
    {"text": "D1"},
    {"output": {"feedback": "shorter", "done": False}},
    {"text": "D2 APPROVED"},
    {"output": {"feedback": "ok", "done": True}},
]


def test_a_loop_renders_expressions_with_defaults_on_the_first_iteration_and_values_later(tmp_path):
    result, seen = run_seeing(write_spec(tmp_path, SPEC, REPLIES), {"topic": "t", "n": 3})
    assert result.error is None, result.error
    assert [text for _, text in seen] == [
        "plan t",
        'draft a + é (2 of 7) now! note=none after [first try] ["a", "é"]',
        "review D1 approved=false round=1",
        'draft a + é (2 of 7) now! note=none after [shorter] ["a", "é"]',
        "review D2 APPROVED approved=true round=2",
    ]


def test_a_plain_path_renders_exactly_as_before():
    assert render("{{ a.b }}-{{a}}\\{{x}}", params={"a": {"b": None}}) == '-{"b": null}{{x}}'
    assert render("{{a}}", params={"a": [1, "é"]}) == '[1, "é"]'


def test_records_read_as_records_even_when_they_arrive_as_json_text():
    assert render("{{ r.items | length }} {{ r.items[0] }}", params={"r": '{"items": [4, 5]}'}) == "2 4"


def test_now_and_today_give_iso_text():
    now, today = render("{{ now() }}|{{ today() }}", params={}).split("|")
    assert now.startswith(today) and now.endswith("+00:00") and len(today) == 10


@pytest.mark.parametrize(
    "template",
    ['{{ "".__class__.__mro__ }}', "{{ x.upper().__class__ }}", "{{ (x|first).__class__ }}"],
)
def test_the_sandbox_refuses_python_internals_as_a_run_error(template):
    with pytest.raises(AgentError) as caught:
        render(template, params={"x": "abc"})
    assert caught.value.kind == "expression_failed"


def test_a_name_that_is_not_there_fails_like_a_path_and_a_system_prompt_keeps_it_as_written():
    with pytest.raises(KeyError):
        render("{{ len(missing) }}", params={})
    assert render("x {{ len(missing) }}", params={}, strict=False) == "x {{ len(missing) }}"


def test_an_expression_value_is_url_quoted_in_a_tool_url_as_a_path_is():
    assert (
        render(
            "q={{ a ~ ' ' ~ b }}",
            params={"a": "x&y", "b": 1},
            quote=lambda v: v.replace(" ", "%20").replace("&", "%26"),
        )
        == "q=x%26y%201"
    )


def test_an_until_expression_decides_is_journaled_and_a_resume_goes_on_from_the_same_iteration():
    import json

    from plait.core.conditions import Expr
    from plait.core.kinds import AskNode, LoopNode, StepNode
    from plait.core.types import FieldType, ObjectType, TEXT
    from runtime_helpers import go, make, program

    verdict = ObjectType((FieldType("verdict", TEXT),))
    p = program(
        loops=[
            LoopNode(
                name="main",
                body=("draft", "check"),
                max_iterations=3,
                until=Expr("'APPROVED' in verdict and len(draft) > 1"),
            )
        ],
        steps=[
            StepNode(
                name="draft",
                model="m",
                prompt="try {{ loop.iteration }} after {{ loop.last.verdict | default('nothing') }}",
            )
        ],
        asks=[AskNode(name="check", question="Good? {{input}}", output=verdict)],
    )
    engine = make(models={"m": {"draft": [{"text": "d1"}, {"text": "d2"}]}}, agents={}, program=p)
    run = engine.start("x")
    assert go(run).pending[0].id == "main/#1/check"
    assert go(run.resume(answers={"check": {"verdict": "no"}})).pending[0].id == "main/#2/check"
    restored = engine.restore(json.loads(json.dumps(run.snapshot())))
    result = go(restored.resume(answers={"check": {"verdict": "APPROVED, ship it"}}))
    assert result.stop_reason == "done" and result.output == {"verdict": "APPROVED, ship it"}
    drafts = [r["messages"][0].text for r in engine.providers["m"].requests]
    assert drafts == ["try 1 after nothing", "try 2 after no"]
    loops = [d for d in result.report.decisions if d["kind"] == "loop"]
    assert [(d["iteration"], d["holds"]) for d in loops] == [(1, False), (2, True)]
    assert loops[0]["condition"] == "{{ 'APPROVED' in verdict and len(draft) > 1 }}"


def test_an_until_expression_that_is_not_true_or_false_fails_the_loop_as_data():
    from plait.core.conditions import Expr
    from plait.core.kinds import LoopNode, StepNode
    from runtime_helpers import go, make, program

    p = program(
        loops=[LoopNode(name="main", body=("draft",), max_iterations=2, until=Expr("len(draft)"))],
        steps=[StepNode(name="draft", model="m", prompt="go")],
    )
    engine = make(models={"m": {"draft": [{"text": "d1"}]}}, agents={}, program=p)
    result = go(engine.run("x"))
    assert result.error is not None and result.error.kind == "loop_condition_invalid"
    assert "not true or false" in result.error.message


def test_a_template_with_an_expression_keeps_every_other_part_as_a_plain_template_reads_it():
    values = {"a": {"b": None, "r": '{"x": [1]}'}, "n": 2}
    text = "{% raw %} {# c #} \\{{lit}} {{a.b}}|{{a.r.x}}|{{a}} {{ n + 1 }} {{ open"
    assert render(text, params=values) == (
        '{% raw %} {# c #} {{lit}} |[1]|{"b": null, "r": "{\\"x\\": [1]}"} 3 {{ open'
    )
    with pytest.raises(KeyError):
        render("{{a.nope}} {{ n + 1 }}", params=values)
    assert render("line\r\n{{a.b}}{{ n * 2 }}", params=values) == "line\r\n4"


def test_the_polish_example_tells_its_first_draft_there_is_no_review_and_later_ones_what_it_said():
    from pathlib import Path

    spec = Path(__file__).resolve().parents[2] / "examples" / "polish" / "polish.plait"
    result, seen = run_seeing(spec, "My order arrived broken.", model="fast")
    assert result.error is None
    drafts = [text for who, text in seen if who == "draft"]
    assert "This is attempt 1. There is no review yet." in drafts[0]
    assert drafts[1].endswith(
        "This is attempt 2. The reviewer said about the last one: No apology, and no fix is offered."
    )


ROUTED = """
plait 0.2
step plan { model = m, prompt = "plan {{input}}", output { docs: list[string], size: int } }
step empty { model = m, prompt = "nothing for {{run.input}}" }
step write { model = m, prompt = "write {{ plan.docs | join(', ') }}" }
route pick on "{{ len(plan.docs) == 0 }}" {
  true  -> empty
  false -> size
}
route size on "{{ 'big' if plan.size > 10 else 'small' }}" {
  "big"   -> write
  "small" -> empty
}
chain main = plan -> pick
"""


@pytest.mark.parametrize(
    "plan, sent",
    [
        ({"docs": [], "size": 20}, "nothing for hi"),
        ({"docs": ["a", "b"], "size": 20}, "write a, b"),
        ({"docs": ["a"], "size": 3}, "nothing for hi"),
    ],
)
def test_a_route_switches_on_an_expressions_value_and_records_it(tmp_path, plan, sent):
    result, seen = run_seeing(write_spec(tmp_path, ROUTED, [{"output": plan}, {"text": "done"}]), "hi")
    assert result.error is None and result.output == "done"
    assert seen[-1][1] == sent
    routes = [(d["name"], d["subject"], d["value"]) for d in result.report.decisions if d["kind"] == "route"]
    assert routes[0] == ("pick", "{{ len(plan.docs) == 0 }}", plan["docs"] == [])


def test_with_values_written_as_expressions_are_computed_and_journaled(tmp_path):
    spec = """
    plait 0.3
    step planner { model = m, prompt = "plan {{input}}", output { tasks: list[string], title: string } }
    step summary {
      with { count: "{{ len(planner.tasks) }}", loud: "{{ planner.title | upper }}" }
      model  = m
      prompt = "{{ input.loud }} in {{ input.count + 1 }} parts"
    }
    step pack { with { n: "{{ len(planner.tasks) * 2 }}", first: "{{ planner.tasks | first }}" } }
    chain main = planner -> summary -> pack
    """
    replies = [{"output": {"tasks": ["a", "b"], "title": "Hi"}}, {"text": "done"}]
    result, seen = run_seeing(write_spec(tmp_path, spec, replies), "x")
    assert result.error is None and result.output == {"n": 4, "first": "a"}
    assert seen[-1][1] == "HI in 3 parts"
    given = {d["name"]: d["record"] for d in result.report.decisions if d["kind"] == "with"}
    assert given["summary"] == {"count": 2, "loud": "HI"}
