"""Template and `until` expressions at check time: typed against the declared types, findings at their place
inside the string, their reads in the graph, a changed expression a contract change, the formatter keeping
them, and `plait check` loading Jinja2 only for a spec that holds one."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import plait
from plait.compiler.diff import diff_graphs
from checks_helpers import assert_at, clean, codes, compile_text, only

HEAD = """\
plait 0.2
model fast = "openai/gpt-4o-mini"
input { topic: string, pages: int }
step plan {
  model  = fast
  prompt = "Plan {{run.input.topic}}"
  output { tasks: list[string], urgent: bool, note: string?, score: float }
}
"""


def spec(prompt: str, until: str | None = None) -> str:
    text = HEAD + f"step write {{ model = fast, prompt = {json.dumps(prompt)} }}\n"
    if until is None:
        return text + "chain main = plan -> write\n"
    text += (
        'step review { model = fast, prompt = "Review {{input}}", output { feedback: string, notes: list[string] } }\n'
    )
    return (
        text
        + f"loop polish = write -> review {{ max_iterations = 3, until = {json.dumps(until)} }}\nchain main = plan -> polish\n"
    )


@pytest.mark.parametrize(
    "prompt",
    [
        "{{ len(plan.tasks) }} tasks: {{ plan.tasks | join(', ') }}",
        "{{ 'Hurry. ' if plan.urgent else '' }}{{ plan.note | default('no note') }}",
        "{{ run.input.pages * 2 + 1 }} pages, {{ plan.score / 2 }}, {{ (plan.score | round) > 3 }}",
        "{{ 'x' in run.input.topic }} {{ 'a' in plan.tasks }} {{ plan.tasks[0] | upper }} {{ plan | tojson }}",
        "{{ run.input.topic.lower().startswith('a') }} {{ now() }} {{ today() }} {{ plan.tasks | length == 0 }}",
        "{{ plan.note is none }} {{ plan.tasks | first }} {{ run.input.topic ~ run.input.pages }}",
    ],
)
def test_well_typed_expressions_check_clean(tmp_path, prompt):
    clean(compile_text(spec(prompt), tmp_path))


@pytest.mark.parametrize(
    "prompt, needle, words",
    [
        ("{{ run.input.pages + ' pages' }}", "+", "adds two numbers, two texts or two lists, not `int` and `string`"),
        ("{{ 'a' in run.input.pages }}", "in run", "`in` looks inside text, a list or a record, not `int`"),
        ("{{ len(run.input.pages) }}", "len(", "`len()` counts text, a list or a record, not `int`"),
        ("{{ plan.tasks | lenth }}", "| lenth", "`|lenth` is not a filter"),
        ("{{ plan.tasks < 3 }}", "<", "`<` compares two numbers (or two texts)"),
        ("{{ plan.note + '!' }}", "+", "`+` reads a value that may be absent (`string?`)"),
        ("{{ range(3) }}", "range(", "`range()` is not a function of plait's expressions"),
        ("{{ plan.tasks.upper() }}", ".upper(", "`.upper()` is not a method of `list[string]`"),
        ("{{ plan.urgent is fancy }}", "is fancy", "`is fancy` is not a test"),
    ],
)
def test_ill_typed_expressions_are_p404_at_their_place_in_the_string(tmp_path, prompt, needle, words):
    text = spec(prompt)
    d = only(compile_text(text, tmp_path), "P404")
    assert words in d.message
    assert_at(d, text, needle)


def test_a_path_inside_an_expression_is_checked_as_a_plain_path_at_its_own_column(tmp_path):
    text = spec("{{ len(plan.taks) if plan.urgent else state.x }}")
    result = compile_text(text, tmp_path)
    d = only(result, "P402")
    assert "has no field `taks`" in d.message and d.fix is not None and d.fix.replacement == "plan.tasks"
    assert_at(d, text, "plan.taks")
    assert_at(only(result, "P315"), text, "state.x")


def test_a_read_in_an_expression_is_dominance_checked(tmp_path):
    text = HEAD + (
        'step write { model = fast, prompt = "{{ len(later.tasks) }}" }\n'
        'step later { model = fast, prompt = "x", output { tasks: list[string] } }\n'
        "chain main = plan -> write -> later\n"
    )
    assert "P316" in codes(compile_text(text, tmp_path))


def test_an_expression_that_does_not_parse_is_p403_once(tmp_path):
    text = spec("Write {{ len(plan.tasks }} sections")
    d = only(compile_text(text, tmp_path), "P403")
    assert "unexpected '}', expected ')'" in d.message
    assert_at(d, text, "len(plan.tasks ")


def test_a_tool_template_expression_reads_only_its_parameters(tmp_path):
    text = (
        'model fast = "openai/gpt-4o-mini"\n'
        'tool find "Find." {\n  params { q: string, n: int }\n'
        '  run = http(GET, "https://x.example/s?q={{ q | lower }}&n={{ n + 1 }}&m={{ nope * 2 }}")\n}\n'
        "agent main { model = fast, tools = [find] }\n"
    )
    d = only(compile_text(text, tmp_path), "P401")
    assert "`{{nope}}` is not a parameter of tool `find`" in d.message


def test_an_until_expression_reads_the_bodys_fields_and_must_be_bool(tmp_path):
    good = spec("Draft {{input}}", until="{{ 'APPROVED' in feedback and len(review.notes) == 0 }}")
    result = compile_text(good, tmp_path)
    clean(result)
    loop = result.graph.to_json()["nodes"]
    until = next(n for n in loop if n["id"] == "polish")["attrs"]["until"]
    assert until == "{{ 'APPROVED' in feedback and len(review.notes) == 0 }}"

    wrong = spec("Draft {{input}}", until="{{ len(feedbak) }}")
    found = compile_text(wrong, tmp_path)
    assert codes(found).count("P313") == 2  # `feedbak` is no field; an int is not a condition
    assert_at(next(d for d in found.diagnostics if "feedbak" in d.message), wrong, "feedbak")

    assert codes(compile_text(spec("x", until="{{ len(feedback) == }}"), tmp_path)) == ["P403"]
    assert codes(compile_text(spec("x", until="review said {{ feedback }}"), tmp_path)) == ["P313"]


def test_what_an_expression_reads_is_a_reads_edge(tmp_path):
    text = HEAD + (
        'step write { model = fast, prompt = "{{ len(plan.tasks) if plan.urgent else 0 }}" }\n'
        "chain main = plan -> write\n"
    )
    result = compile_text(text, tmp_path)
    reads = [e for e in result.graph.to_json()["edges"] if e["kind"] == "reads" and e["source"] == "write"]
    assert {tuple(e["attrs"]["path"]) for e in reads} == {("plan", "tasks"), ("plan", "urgent")}


def test_a_changed_expression_is_a_contract_change_and_reworded_text_is_not(tmp_path):
    def graph(prompt: str):
        return compile_text(spec(prompt), tmp_path).graph

    base = graph("Write {{ len(plan.tasks) }} sections")
    changed = diff_graphs(base, graph("Write {{ len(plan.tasks) + 1 }} sections"))
    assert [(c.what, c.subject, c.field) for c in changed] == [("contract", "write", "prompt")]
    reworded = diff_graphs(base, graph("Please write {{ len(plan.tasks) }} sections"))
    assert [(c.what, c.field) for c in reworded] == [("attribute", "prompt")]


def test_the_formatter_keeps_expressions_as_written():
    text = spec("{{ plan.tasks|join(', ') }} {{ 'a' if plan.urgent else 'b' }}", until="{{ 'OK' in feedback }}")
    formatted = plait.format(text)
    assert "{{ plan.tasks|join(', ') }} {{ 'a' if plan.urgent else 'b' }}" in formatted
    assert "until = \"{{ 'OK' in feedback }}\"" in formatted


PROBE = """\
import sys
from plait.cli import main
status = main(["check", "spec.plait"])
print("JINJA", "jinja2" in sys.modules, file=sys.stderr)
sys.exit(status)
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    "prompt, loaded", [("{{plan.tasks}} {{ run.input.topic }}", False), ("{{ len(plan.tasks) }}", True)]
)
def test_check_loads_jinja2_only_for_a_spec_with_an_expression(tmp_path, prompt, loaded):
    (tmp_path / "spec.plait").write_text(spec(prompt), encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert f"JINJA {loaded}" in done.stderr


ROUTED = (
    HEAD
    + """\
step empty { model = fast, prompt = "nothing" }
step write { model = fast, prompt = "write" }
route pick on SUBJECT {
  CASES
}
chain main = plan -> pick
"""
)


def routed(subject: str, cases: str = "true -> empty\n  false -> write") -> str:
    return ROUTED.replace("SUBJECT", json.dumps(subject)).replace("CASES", cases)


def test_a_route_may_switch_on_an_expression_typed_as_its_subject(tmp_path):
    clean(compile_text(routed("{{ len(plan.tasks) == 0 }}"), tmp_path))
    two = routed("{{ 'big' if plan.score > 10 else 'small' }}", '"big" -> write\n  "small" -> empty')
    clean(compile_text(two, tmp_path))
    missing = routed("{{ 'big' if plan.score > 10 else 'small' }}", '"big" -> write')
    assert "P310" in codes(compile_text(missing, tmp_path))  # `"small"` has no case: the literal union is known
    wrong = routed("{{ len(plan.tasks) == 0 }}", '"yes" -> write\n  else -> empty')
    assert codes(compile_text(wrong, tmp_path)) == ["P309"]


def test_a_route_subject_expression_is_checked_where_it_is_written(tmp_path):
    text = routed("{{ len(plan.taks) == 0 }}")
    assert_at(only(compile_text(text, tmp_path), "P402"), text, "plan.taks")
    assert codes(compile_text(routed("{{ len(plan.tasks) == }}"), tmp_path)) == ["P403"]
    assert codes(compile_text(routed("plan.tasks"), tmp_path)) == ["P308"]  # a string that is no expression
    graph = compile_text(routed("{{ len(plan.tasks) == 0 }}"), tmp_path).graph.to_json()
    route = next(n for n in graph["nodes"] if n["id"] == "pick")
    assert route["attrs"]["subject"] == "{{ len(plan.tasks) == 0 }}"
    assert any(e["kind"] == "reads" and e["source"] == "pick" and e["target"] == "plan" for e in graph["edges"])


def test_the_formatter_keeps_a_route_subject_expression():
    text = routed("{{ len(plan.tasks) == 0 }}")
    assert 'route pick on "{{ len(plan.tasks) == 0 }}" {' in plait.format(text)


BOUND = """\
plait 0.3
model fast = "openai/gpt-4o-mini"
step planner { model = fast, prompt = "Plan {{input}}", output { tasks: list[string], title: string } }
step summary {
  with { count: COUNT, loud: "{{ planner.title | upper }}" }
  model  = fast
  prompt = PROMPT
}
chain main = planner -> summary
"""


def bound(count: str, prompt: str = "{{ input.loud }} in {{ input.count + 1 }} parts") -> str:
    return BOUND.replace("COUNT", json.dumps(count)).replace("PROMPT", json.dumps(prompt))


def test_a_with_value_may_be_an_expression_typed_where_the_runnable_runs(tmp_path):
    clean(compile_text(bound("{{ len(planner.tasks) }}"), tmp_path))
    # `count` is an int and `loud` text: the prompt's arithmetic on them is checked against those types
    typed = bound("{{ len(planner.tasks) }}", "{{ input.loud + 1 }} {{ input.count }}")
    assert codes(compile_text(typed, tmp_path)) == ["P404"]
    text = bound("{{ len(planner.taks) }}")
    assert_at(only(compile_text(text, tmp_path), "P402"), text, "planner.taks")
    assert codes(compile_text(bound("{{ len( }}"), tmp_path)) == ["P403"]
    refused = only(compile_text(bound("planner.tasks"), tmp_path), "P203")  # a string that is no expression
    assert any("one expression" in note for note in refused.notes)


def test_a_changed_with_expression_is_a_contract_change_named_as_written(tmp_path):
    old = compile_text(bound("{{ len(planner.tasks) }}"), tmp_path).graph
    new = compile_text(bound("{{ len(planner.tasks) * 2 }}"), tmp_path).graph
    [change] = diff_graphs(old, new)
    assert (change.what, change.field) == ("contract", "with.count")
    assert (change.old, change.new) == ("{{ len(planner.tasks) }}", "{{ len(planner.tasks) * 2 }}")
