"""Completion offers `budget` where a chain and a route write it: a chain's block after its last element, and a
route's braces beside its cases (where a case's target is still offered after `->`)."""

from __future__ import annotations

import pytest

from plait.ide.complete import complete

SPEC = """plait 0.2
model fast = "openai/gpt-4o-mini"
step a { model = fast, prompt = "A: {{input}}" }
step b { model = fast, prompt = "B: {{input}}" }
"""


def offered(typed: str) -> list[str]:
    text = SPEC + typed
    return [c.label for c in complete(text, len(text), {}, [])]


@pytest.mark.parametrize(
    "typed",
    [
        "chain main = a -> b {\n  ",
        "chain main = a -> b { ",
        'route r on input {\n  "x" -> a\n  ',
        "route r on input {\n  ",
    ],
)
def test_budget_is_offered_in_a_chains_block_and_among_a_routes_cases(typed):
    assert offered(typed) == ["budget"]


def test_a_budget_written_is_not_offered_again_and_a_case_still_takes_a_runnable():
    assert offered("route r on input {\n  budget = { model_calls = 3 }\n  ") == []
    assert "budget" not in offered('route r on input {\n  "x" -> ')
