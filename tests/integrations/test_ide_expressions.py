"""Completion inside a `{{ expression }}`: the path being written wherever it stands, and filters after `|`."""

from __future__ import annotations

import pytest

from plait.ide.complete import complete
from plait.ide.workspace import Workspace

SPEC = """plait 0.2
model fast = "openai/gpt-4o-mini"

step review {
  model  = fast
  prompt = "Review: {{input}}"
  output { verdict: "ok" | "redo", notes: list[string] }
}

chain main = review
"""


@pytest.fixture
def offered(project):
    path = project("spec.plait", SPEC).resolve()
    ws = Workspace()
    ws.set(path, SPEC)
    ws.project().declared(path)

    def at(typed: str) -> list[str]:
        text = SPEC + typed
        ws.set(path, text)
        found = ws.project()
        return [c.label for c in complete(text, len(text), found.declared(path), found.seen_modules(path))]

    return at


@pytest.mark.parametrize(
    "typed, expected",
    [
        ('step s {\n  prompt = "{{ len(review.', ["verdict", "notes"]),
        ("step s {\n  prompt = \"{{ 'x' if review.ver", ["verdict", "notes"]),
        ('step s {\n  prompt = "{{ review.notes | join(", ") }} and {{ review.', ["verdict", "notes"]),
        ("loop l = review { max_iterations = 2, until = \"{{ 'ok' in review.", ["verdict", "notes"]),
    ],
)
def test_fields_are_offered_for_a_path_inside_an_expression(offered, typed, expected):
    assert offered(typed) == expected


def test_filters_are_offered_after_a_bar(offered):
    found = offered('step s {\n  prompt = "{{ review.notes | le')
    assert found == ["length"]
    assert "default" in offered('step s {\n  prompt = "{{ review.notes | ')


def test_a_closed_expression_offers_nothing(offered):
    assert offered('step s {\n  prompt = "{{ len(review.notes) }} ') == []


EXPR_SPEC = """plait 0.2
model fast = "openai/gpt-4o-mini"

step review {
  model  = fast
  prompt = "Review: {{input}}"
  output { verdict: "ok" | "redo", notes: list[string] }
}

step write { model = fast, prompt = "{{ len(review.notes) if review.verdict == 'ok' else 'review' }}" }

chain main = review -> write
"""


def test_a_name_an_expression_reads_is_a_reference_that_renames_and_hovers(project):
    from plait.compiler.pipeline import compile_spec
    from plait.ide.analysis import analyse
    from plait.ide.refs import references, rename, target_at

    path = project("spec.plait", EXPR_SPEC).resolve()
    ws = Workspace((path.parent,))
    found = ws.project()
    at = EXPR_SPEC.index("len(review") + 5
    target = target_at(found, path, at)
    assert target is not None and target.declaration.kind == "step"
    places = [(occ.span.line, occ.span.column) for _, occ in references(found, target)]
    assert places == [(4, 6), (10, 45), (10, 62), (12, 14)]  # not the literal 'review' in quotes
    edits = rename(found, path, at, "critique")
    text = EXPR_SPEC
    for occ, new in sorted(next(iter(edits.values())), key=lambda item: -item[0].span.offset):
        text = text[: occ.span.offset] + new + text[occ.span.end_offset :]
    assert "{{ len(critique.notes) if critique.verdict == 'ok' else 'review' }}" in text
    path.write_text(text)
    assert compile_spec(path).ok
    analysis = analyse(EXPR_SPEC, str(path))
    assert analysis.name_at(at) == "review" and "step review" in analysis.hover(at)
