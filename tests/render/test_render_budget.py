"""A runnable's budget is drawn on its node, in every text format: the most it may spend is a contract a reader
checks on the picture, like `max_steps`."""

from __future__ import annotations

import pytest

from plait.compiler.pipeline import compile_spec
from plait.compiler.render import RenderOptions, render

SPEC = """plait 0.2
model m = "openai/gpt-4o-mini" { price = { input = 1.0, output = 2.0 } }
agent worker { model = m, budget = { usd = 2, tokens = 200000, model_calls = 40 } }
step a { model = m, prompt = "A: {{input}}" }
chain main = worker -> a { budget = { usd = 0.5, on_exceeded = fail } }
route pick on input {
  "x" -> a
  budget = { model_calls = 3, unpriced = allow }
  else -> main
}
"""


@pytest.fixture(scope="module")
def graph():
    result = compile_spec(SPEC, path="spec.plait")
    assert result.graph is not None, result.diagnostics
    return result.graph


@pytest.mark.parametrize("format", ["dot", "mermaid"])
def test_each_budget_is_on_its_nodes_label(graph, format):
    out = render(graph, format, RenderOptions())
    assert "budget $2.00 · 200000 tokens · 40 calls, then pause" in out  # an agent's
    assert "budget $0.50, then fail" in out  # a chain's
    assert "budget 3 calls, then pause (unpriced allowed)" in out  # a route's


def test_a_runnable_without_a_budget_draws_none(graph):
    out = render(graph, "mermaid", RenderOptions())
    [step] = [line for line in out.splitlines() if "<b>a</b>" in line]
    assert "budget" not in step
