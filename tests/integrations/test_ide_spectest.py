"""The editor and `test` blocks: a name a test reads is a use of its declaration (definition, references, rename
across the spec and its `*.test.plait`), and a test's own name, in a namespace of its own, is no declaration."""

from __future__ import annotations

from plait.compiler.pipeline import compile_spec
from plait.ide.refs import references, rename, target_at
from plait.ide.workspace import Workspace

SPEC = """plait 0.2

model fast = "openai/gpt-4o-mini"

tool lookup "Look up a topic." {
  params { topic: string }
  run = http(GET, "https://kb.example.com/?q={{topic}}")
}

step review {
  model  = fast
  prompt = "Review: {{input}}"
  output { verdict: "ok" | "redo" }
}

agent writer { model = fast, tools = [lookup] }

route decide on input.verdict { "ok" -> writer, "redo" -> writer }

chain main = review -> decide
"""

TESTS = """plait 0.2
import "spec.plait"

test review {
  entry   = main
  replies = { review = [{ output = { verdict = "ok" } }], writer = [{ text = "done" }] }
  expect review.verdict == "ok"
  expect case(decide) == "ok"
  expect run.tool_calls in_order [lookup({ topic = "x" })]
  expect not called(lookup)
}
"""


def _places(found) -> list[tuple[str, int, int]]:
    return [(file.name, occ.span.line, occ.span.column) for file, occ in found]


def test_names_in_a_test_are_uses_and_its_own_name_is_not_a_declaration(project):
    spec = project("spec.plait", SPEC).resolve()
    tests = project("spec.test.plait", TESTS).resolve()
    ws = Workspace((spec.parent,))
    p = ws.project()
    # From the test file, `review.verdict` leads to the step (not to the test called `review`).
    target = target_at(p, tests, TESTS.index("review.verdict") + 1)
    assert (target.file, target.declaration.kind) == (spec, "step")
    assert [place for place in _places(references(p, target)) if place[0] == "spec.test.plait"] == [
        ("spec.test.plait", 6, 15),
        ("spec.test.plait", 7, 10),
    ]
    lookup = target_at(p, tests, TESTS.index("lookup({") + 1)
    assert (lookup.file, lookup.declaration.kind) == (spec, "tool")
    assert [place for place in _places(references(p, lookup)) if place[0] == "spec.test.plait"] == [
        ("spec.test.plait", 9, 35),
        ("spec.test.plait", 10, 21),
    ]
    assert target_at(p, tests, TESTS.index("test review") + 6) is None


def test_renaming_a_route_renames_it_in_the_tests_and_both_files_compile(project):
    spec = project("spec.plait", SPEC).resolve()
    tests = project("spec.test.plait", TESTS).resolve()
    ws = Workspace((spec.parent,))
    edits = rename(ws.project(), spec, SPEC.index("route decide") + 7, "choose")
    assert set(edits) == {spec, tests}
    for file, found in edits.items():
        text = ws.text(file)
        for occ, new in sorted(found, key=lambda item: -item[0].span.offset):
            text = text[: occ.span.offset] + new + text[occ.span.end_offset :]
        file.write_text(text)
    assert "case(choose)" in tests.read_text()
    result = compile_spec(tests)
    assert result.ok, [str(d) for d in result.errors]
    assert [t.name for t in result.tests] == ["review"]
