"""A budget on a chain (`chain X = a -> b { budget = ... }`) and on a route (`budget = ...` beside its cases):
written, checked, formatted, carried by the graph and enforced at run time like every runnable's.

Prices come from the spec's own `price` and usage from the scripted replies, so the numbers never change with an
upstream catalogue.
"""

from __future__ import annotations

import json

import pytest

import plait
from plait.cli import main
from plait.compiler.pipeline import compile_spec
from plait.dsl.formatter import format_text
from plait.runtime.engine import Engine
from plait.runtime.errors import AgentError

HEAD = 'model m = "scripted/m" { script = "replies.json", price = { input = 1.0, output = 2.0 } }\n'
SMALL = {"input_tokens": 1000, "output_tokens": 100}  # $0.0012
STEPS = """
step a { model = m, prompt = "A: {{input}}" }
step b { model = m, prompt = "B: {{input}}" }
"""
REPLIES = [{"text": "one", "usage": SMALL}, {"text": "two", "usage": SMALL}, {"text": "three", "usage": SMALL}]


def project(tmp_path, body, replies=REPLIES):
    (tmp_path / "spec.plait").write_text(HEAD + STEPS + body)
    (tmp_path / "replies.json").write_text(json.dumps(replies))
    return tmp_path / "spec.plait"


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def test_a_chains_budget_pauses_the_run_and_a_raise_on_resume_finishes_it(tmp_path, capsys):
    spec = project(tmp_path, "chain main = a -> b { budget = { model_calls = 1 } }\n")
    code, out, err = cli(capsys, "run", spec, "--input", "hi", "--json")
    assert code == 3, err
    paused = json.loads(out)
    assert "the budget of `main` would be exceeded: 1 model calls spent of 1 model calls" in paused["pause_reason"]
    assert paused["model_calls"] == 1 and paused["budget"]["exceeded"]["scope"] == "main"

    code, out, err = cli(capsys, "resume", paused["run_id"], "--dir", tmp_path, "--budget", "model_calls=2", "--json")
    assert code == 0, err
    done = json.loads(out)
    assert done["output"] == "two"
    [scope] = done["budget"]["scopes"]
    assert scope["runnable"] == "main" and scope["limits"]["model_calls"] == 2 and scope["spent"]["model_calls"] == 2


def test_a_routes_budget_covers_the_case_it_takes(tmp_path):
    body = """
chain pair = a -> b
route main on input {
  "one" -> a
  budget = { model_calls = 1, on_exceeded = fail }
  else -> pair
}
"""
    spec = project(tmp_path, body)
    assert plait.run(Engine.from_spec(spec), "one").output == "one"  # one call: within the route's budget
    with pytest.raises(AgentError) as failed:
        plait.run(Engine.from_spec(spec), "other")
    assert failed.value.kind == "budget_exceeded"
    assert "the budget of `main` would be exceeded" in failed.value.message
    assert failed.value.report["model_calls"] == 1  # the pair's second call never started


def test_a_nested_chain_gets_only_what_is_left_of_the_chain_around_it(tmp_path):
    body = """
chain inner = a -> b { budget = { model_calls = 5, on_exceeded = fail } }
chain main = a -> inner { budget = { model_calls = 2, on_exceeded = fail } }
"""
    spec = project(tmp_path, body)
    with pytest.raises(AgentError) as failed:
        plait.run(Engine.from_spec(spec), "hi")
    assert "the budget of `main` would be exceeded" in failed.value.message
    assert failed.value.report["model_calls"] == 2


def test_chain_and_route_budgets_are_checked_and_carried_by_the_graph(tmp_path):
    body = """
chain main = a -> b { budget = { usd = 0.5, on_exceeded = fail } }
route pick on input { "x" -> a, budget = { tokens = 1000 }, else -> main }
"""
    result = compile_spec(project(tmp_path, body))
    assert not [d for d in result.diagnostics if d.severity.name == "ERROR"], result.diagnostics
    nodes = {n["id"]: n for n in result.graph.to_json()["nodes"]}
    assert nodes["main"]["attrs"]["budget"] == {"usd": 0.5, "on_exceeded": "fail", "unpriced": "deny"}
    assert nodes["pick"]["attrs"]["budget"] == {"tokens": 1000, "on_exceeded": "pause", "unpriced": "deny"}


def test_a_chain_or_route_attribute_other_than_budget_is_p201(tmp_path):
    body = """
chain main = a -> b { budgt = { usd = 1 } }
route pick on input { "x" -> a, retries = 2, else -> main }
"""
    result = compile_spec(project(tmp_path, body))
    found = [(d.code, d.message) for d in result.diagnostics if d.code == "P201"]
    assert found == [
        ("P201", "unknown attribute `budgt` for chain `main`"),
        ("P201", "unknown attribute `retries` for route `pick`"),
    ]


def test_fmt_writes_a_chains_block_and_keeps_a_routes_attributes_among_its_cases():
    text = """plait 0.2

chain main = a -> b {budget={usd=1,on_exceeded=fail}}

route pick on input {
  "x" -> a
  budget = {model_calls=3}   # at most three calls
  else -> main
}
"""
    formatted, problems = format_text(text)
    assert formatted is not None, problems
    assert "chain main = a -> b { budget = { usd = 1, on_exceeded = fail } }\n" in formatted
    lines = [line.split("#")[0].rstrip() for line in formatted.splitlines()]
    assert lines[4:9] == [
        "route pick on input {",
        '  "x" -> a',
        "  budget = { model_calls = 3 }",
        "  else -> main",
        "}",
    ]
    assert "# at most three calls" in formatted
    assert format_text(formatted)[0] == formatted
    one_line = 'plait 0.2\n\nroute pick on input { "x" -> a, budget = { model_calls = 3 }, else -> b }\n'
    assert format_text(one_line)[0] == one_line


def test_fmt_keeps_a_chains_elements_on_one_line_when_only_its_block_spans_lines():
    text = "plait 0.2\n\nchain main = a -> b {\n  # why\n  budget = { model_calls = 10 }\n}\n"
    assert format_text(text)[0] == text
    long = "plait 0.2\n\nchain main = " + " -> ".join(["a_rather_long_step_name"] * 4) + " { budget = { usd = 1 } }\n"
    formatted = format_text(long)[0]
    assert formatted is not None and formatted.splitlines()[2:] == [
        "chain main = a_rather_long_step_name",
        "  -> a_rather_long_step_name",
        "  -> a_rather_long_step_name",
        "  -> a_rather_long_step_name { budget = { usd = 1 } }",
    ]
    assert format_text(formatted)[0] == formatted
