"""A loop's back edge is the one cycle a spec may declare; every other way back is still P304 (or P303)."""

from __future__ import annotations

import plait

HEAD = 'plait 0.2\nmodel m = "openai/gpt-4o-mini"\n'
STEPS = """
step draft { model = m, prompt = "Draft {{input}}" }
step review {
  model  = m
  prompt = "Grade {{input}}"
  output { verdict: "accept" | "revise" }
}
"""


def _codes(body: str) -> list[str]:
    return [d.code for d in plait.compile(HEAD + STEPS + body).diagnostics]


def test_a_loop_is_a_cycle_the_graph_allows():
    result = plait.compile(
        HEAD + STEPS + 'loop polish = draft -> review { until = verdict == "accept", max_iterations = 3 }\n'
    )
    assert result.errors == [], [d.message for d in result.errors]
    back = list(result.graph.edges("back"))
    assert [(e.source, e.target, e.bound, e.label) for e in back] == [
        ("review", "polish", 3, 'until verdict == "accept" · ≤ 3')
    ]
    assert [(e.source, e.target) for e in result.graph.edges("body")] == [("polish", "draft")]


def test_a_loop_whose_body_contains_the_loop_is_still_a_cycle():
    codes = _codes("loop polish = draft -> again { max_iterations = 2 }\nchain again = review -> polish\n")
    assert "P304" in codes


def test_a_route_case_that_contains_its_own_chain_is_a_cycle():
    body = """
route pick on input.verdict {
  "accept" -> draft
  else     -> main
}
chain main = review -> pick
"""
    assert "P304" in _codes(body)


def test_a_map_over_a_body_that_contains_the_map_is_a_cycle():
    body = """
step plan {
  model  = m
  prompt = "Plan {{input}}"
  output { items: list[string] }
}
map each_item = inner { over = input.items }
chain inner = plan -> each_item
"""
    assert "P304" in _codes(body)
