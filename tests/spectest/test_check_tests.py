"""`plait check` on `test` blocks: each mistake a diagnostic with its code, its place and a message that says what
is wrong (and what is meant, when a near name exists); a correct test compiles to its record."""

from __future__ import annotations

import pytest

from plait.compiler.pipeline import compile_spec

SPEC = """plait 0.2

model fast   = "openai/gpt-4o-mini"
model grader = "openai/gpt-4o"

input { ticket: string }

tool lookup "Look up." {
  params { topic: string }
  run = http(GET, "https://kb.example.com/?q={{topic}}")
}
tool wipe "Wipe." {
  params { what: string }
  run = http(POST, "https://kb.example.com/wipe")
}

step classify {
  model  = fast
  prompt = "{{run.input.ticket}}"
  output { category: "billing" | "tech", urgency: int }
}
agent helper { model = fast, tools = [lookup] }
step other { model = fast, prompt = "x" }
ask confirm "Go on?" { answer { go: bool } }
route triage on input.category { "billing" -> helper, else -> other }
loop again = other { until = other == "done", max_iterations = 2 }
agent cleaner { model = fast, tools = [wipe] }

chain main = confirm -> classify -> triage
chain nightly = cleaner -> again
"""


def _check(test: str) -> list[tuple[str, int, int, str]]:
    result = compile_spec(SPEC + "\n" + test, path="spec.plait")
    return [(d.code, d.span.line, d.span.column, d.message) for d in result.diagnostics if d.is_error]


LINE = SPEC.count("\n") + 2  # the line a test written after the spec starts on

CASES = [
    (
        "test t {\n  input = { ticket = 3 }\n}",
        "P701",
        1,
        "`input` does not fit the spec's `input` (object { ticket })",
    ),
    ("test t {\n  enrty = main\n}", "P701", 1, "test `t` has no attribute `enrty`; did you mean `entry`?"),
    ("test t {\n  entry = lookup\n}", "P701", 1, "`entry` must name a runnable of the spec"),
    ("test t {\n  replies = 3\n}", "P701", 1, "`replies` must be a map of replies by runnable"),
    ("test t {\n  replies = { classify = 3 }\n}", "P701", 1, "the replies for `classify` must be a list"),
    ("test t {\n  replies = cassette(3)\n}", "P701", 1, 'a cassette is `cassette("FILE")`'),
    ("test t {\n  answers = { confirm = { go = 1 } }\n}", "P701", 1, "the answer for `confirm` does not fit"),
    ('test t {\n  decisions = { lookup = "maybe" }\n}', "P701", 1, 'the decision for `lookup` must be "approve"'),
    (
        'test t {\n  decisions = { lookup = { action = "edit" } }\n}',
        "P701",
        1,
        "an edit of `lookup` gives the call's new arguments",
    ),
    ("test t {\n  replies = { nobody = [] }\n}", "P702", 1, "`replies` names `nobody`, which is not a runnable"),
    ("test t {\n  replies = { cleaner = [] }\n}", "P703", 1, "`replies` names `cleaner`, which `main` does not reach"),
    ("test t {\n  answers = { confrim = { go = true } }\n}", "P702", 1, "did you mean `confirm`?"),
    ('test t {\n  expect clasify.category == "billing"\n}', "P702", 1, "did you mean `classify`?"),
    ("test t {\n  expect classify.urgency.level == 1\n}", "P702", 1, "`classify.urgency` has no field `level`"),
    ("test t {\n  expect output.x == 1\n}", "P702", 1, "`main` has no field `x`"),
    ("test t {\n  expect visited(triage)\n}", "P702", 1, "`visited(...)` is not something an expectation can read"),
    ('test t {\n  expect called(lookup, { topc = "x" })\n}', "P702", 1, "did you mean `topic`?"),
    ('test t {\n  expect judge(gradr, "ok?")\n}', "P702", 1, "did you mean `grader`?"),
    ("test t {\n  expect called(wipe)\n}", "P703", 1, "`called(...)` names tool `wipe`, which `main` never reaches"),
    ("test t {\n  expect iterations(again) == 1\n}", "P703", 1, "names loop `again`, which `main` never reaches"),
    ("test t {\n  expect case(classify) == 1\n}", "P702", 1, "`classify`, which is not a route of the spec"),
    ('test t {\n  expect case(triage) in ["billing", "sales"]\n}', "P704", 1, 'route `triage` has no case "sales"'),
    ('test t {\n  expect classify.urgency matches "4"\n}', "P705", 1, "`matches` reads text"),
    ('test t {\n  expect output matches "("\n}', "P705", 1, "is not a regular expression"),
    ("test t {\n  expect classify.category in 3\n}", "P705", 1, "`in` takes a list (or a string)"),
    ("test t {\n  expect output in_order [lookup]\n}", "P705", 1, "`in_order` compares `run.tool_calls`"),
    ('test t {\n  expect judge(grader, "ok?") { repeat = 0 }\n}', "P705", 1, "`repeat` is a whole number, 1 or more"),
    ('test t {\n  expect judge(grader, "ok?") { pass_rate = 2 }\n}', "P705", 1, "`pass_rate` is a number from 0 to 1"),
    ("test t {\n  expect judge(grader) \n}", "P705", 1, '`judge(MODEL, "rubric")` takes a model and the rubric'),
    ('test t {\n  expect "text"\n}', "P705", 1, "an expectation starts with what the run did"),
]


@pytest.mark.parametrize(("test", "code", "offset", "message"), CASES, ids=[c[3][:40] for c in CASES])
def test_a_mistake_in_a_test_is_a_diagnostic_at_its_place(test, code, offset, message):
    found = _check(test)
    assert [c for c, *_ in found] == [code], found
    _, line, _, said = found[0]
    assert line == LINE + offset
    assert message in said


def test_two_tests_with_one_name_are_p102_and_a_test_may_share_a_runnables_name():
    found = _check("test classify {\n  expect run.steps >= 0\n}\ntest classify {\n  expect run.steps >= 0\n}")
    assert [(c, m) for c, _, _, m in found] == [("P102", "test `classify` is declared twice")]


def test_a_correct_test_compiles_to_its_record():
    result = compile_spec(
        SPEC + '\ntest good "It works" {\n  entry = main\n  input = { ticket = "x" }\n'
        '  replies = { classify = [{ output = { category = "billing", urgency = 1 } }] }\n'
        "  answers = { confirm = { go = true } }\n"
        '  expect case(triage) == "billing"\n}\n',
        path="spec.plait",
    )
    assert result.ok, [str(d) for d in result.errors]
    [test] = result.tests
    assert (test.name, test.description, test.entry, test.input, test.replies) == (
        "good",
        "It works",
        "main",
        {"ticket": "x"},
        "inline",
    )
    assert test.answers == {"confirm": {"go": True}}
    [expectation] = test.expects
    assert expectation.text == 'expect case(triage) == "billing"'
    assert expectation.tree == {
        "op": "==",
        "left": {"kind": "case", "name": "triage"},
        "right": {"kind": "value", "value": "billing"},
    }
    # Not a node: the graph is the spec's alone.
    assert "good" not in result.graph
