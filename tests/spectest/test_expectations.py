"""Every kind of `expect` against real runs: each passes when the run did what it says, and fails, with a message
saying what the run did instead, when it did not.

One spec (tests/fixtures/spectest/spec.plait: a route, a map, a loop, an ask, an approval, tools and a judge) and
one generated test file with a test per case, run once by a `Session`; each case then reads its own outcome.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from plait.spectest.runner import Outcome, Session, load_tests

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "spectest"

REPLIES = {
    "classify": '[{ output = { kind = "long", size = 3, note = "Cats are long." } }]',
    "quick": '[{ text = "quick answer" }]',
    "plan": '[{ output = { parts = ["a", "b", "c"] } }]',
    "part": '[{ text = "part" }, { text = "part" }, { text = "part" }]',
    "draft": '[{ text = "first draft" }, { text = "second draft" }]',
    "review": "[{ output = { ok = false } }, { output = { ok = true } }]",
    "writer": """[
      { tool_calls = [{ name = "lookup", arguments = { topic = "cats" } }] },
      { tool_calls = [{ name = "publish", arguments = { text = "All about cats" } }] },
    ]""",
    "grader": """[
      { output = { pass = true, reason = "Good." } },
      { output = { pass = false, reason = "Too curt." } },
      { output = { pass = true, reason = "Fine." } },
    ]""",
}
ANSWERS = "{ confirm = { go = true } }"
DECISIONS = '{ publish = "approve" }'

SHORT = {"classify": '[{ output = { kind = "short", size = 1, note = "Short." } }]'}
EXHAUSTED = {"review": "[{ output = { ok = false } }, { output = { ok = false } }]"}

#: (name, the expectation, whether it holds, what a failure says (a part of it), replies changed for this case).
CASES: list[tuple[str, str, bool, str | None, dict[str, str]]] = [
    # --- the output and a runnable's output fields ---
    ("output_equals", 'output == "published"', True, None, {}),
    ("output_equals_fails", 'output == "draft"', False, 'it is "published"', {}),
    ("output_differs", 'output != "draft"', True, None, {}),
    ("output_differs_fails", 'output != "published"', False, 'it is "published"', {}),
    ("field_compare", "classify.size >= 3", True, None, {}),
    ("field_compare_fails", "classify.size < 3", False, "it is 3", {}),
    ("field_in", 'classify.kind in ["long", "short"]', True, None, {}),
    ("field_in_fails", 'classify.kind in ["short"]', False, 'it is "long"', {}),
    ("field_matches", 'classify.note matches "^Cats"', True, None, {}),
    ("field_matches_fails", 'classify.note matches "dogs"', False, 'it is "Cats are long."', {}),
    ("list_contains", 'each contains "part"', True, None, {}),
    ("list_contains_fails", 'each contains "whole"', False, 'it is ["part", "part", "part"]', {}),
    ("text_contains", 'output contains "lish"', True, None, {}),
    ("bool_field", "review.ok == true", True, None, {}),
    ("bool_field_fails", "review.ok == false", False, "it is true", {}),
    ("never_ran", "plan.parts != []", False, "`plan` never finished in this run", SHORT),
    ("and_or", 'classify.size == 3 and (output == "x" or output == "published")', True, None, {}),
    ("and_fails", 'classify.size == 3 and output == "x"', False, 'it is "published"', {}),
    # --- the path ---
    ("route_case", 'case(pick) == "long"', True, None, {}),
    ("route_case_fails", 'case(pick) == "short"', False, 'it is "long"', {}),
    ("route_case_other", 'case(pick) == "short"', True, None, SHORT),
    ("loop_iterations", "iterations(refine) == 2", True, None, {}),
    ("loop_iterations_fails", "iterations(refine) == 1", False, "it is 2", {}),
    ("loop_met", 'exit(refine) == "met"', True, None, {}),
    ("loop_exhausted", 'exit(refine) == "exhausted"', True, None, EXHAUSTED),
    ("loop_exit_fails", 'exit(refine) == "met"', False, 'it is "exhausted"', EXHAUSTED),
    ("map_items", "items(each) == 3", True, None, {}),
    ("map_items_fails", "items(each) == 2", False, "it is 3", {}),
    ("map_items_none", "items(each) == 0", True, None, SHORT),
    ("ask_reached", "asked(confirm)", True, None, {}),
    ("ask_reached_fails", "not asked(confirm)", False, "the run stopped at ask `confirm`", {}),
    ("approvals", "approvals(publish) == 1", True, None, {}),
    ("approvals_fails", "approvals(publish) == 0", False, "it is 1", {}),
    # --- the trajectory ---
    ("calls_exact", "run.tool_calls == [lookup, publish]", True, None, {}),
    ("calls_exact_fails", "run.tool_calls == [publish]", False, "calls made: lookup, publish", {}),
    ("calls_in_order", 'run.tool_calls in_order [lookup({ topic = "cats" }), publish]', True, None, {}),
    (
        "calls_in_order_fails",
        "run.tool_calls in_order [publish, lookup]",
        False,
        "no call of `lookup` in order after the ones before it (calls made: lookup, publish)",
        {},
    ),
    ("calls_any_order", "run.tool_calls any_order [publish, lookup]", True, None, {}),
    ("calls_any_order_fails", "run.tool_calls any_order [lookup, lookup]", False, "no call of `lookup` that fits", {}),
    ("called_matching", 'called(lookup, { topic = matches("^ca") })', True, None, {}),
    (
        "called_matching_fails",
        'called(lookup, { topic = "dogs" })',
        False,
        '`lookup` was called: {"tool": "lookup", "arguments": {"topic": "cats"}}',
        {},
    ),
    ("never_called", "not called(publish)", False, "`publish` was called", {}),
    ("called_count", "calls(lookup) == 1", True, None, {}),
    ("called_count_fails", "calls(lookup) == 2", False, "it is 1", {}),
    # --- budgets ---
    ("model_calls", "run.model_calls == 11", True, None, {}),
    ("model_calls_fails", "run.model_calls <= 5", False, "it is 11", {}),
    ("tokens", "run.tokens < 1000", True, None, {}),
    ("tokens_fails", "run.tokens < 10", False, "it is ", {}),
    ("steps", "run.steps == 11", True, None, {}),
    ("steps_fails", "run.steps > 11", False, "it is 11", {}),
    ("stop_reason", 'run.stop_reason == "until"', True, None, {}),
    ("stop_reason_fails", 'run.stop_reason == "done"', False, 'it is "until"', {}),
    ("cost", "run.cost > 1", True, None, {}),
    ("cost_fails", "run.cost < 1", False, "it is ", {}),
    # --- judged ---
    ("judge_rate_met", 'judge(grader, "Polite?") { repeat = 3, pass_rate = 0.6 }', True, None, {}),
    (
        "judge_rate_missed",
        'judge(grader, "Polite?") { repeat = 3, pass_rate = 0.8 }',
        False,
        "the judge passed it 2 of 3 times (67%, 80% needed); it said: Too curt.",
        {},
    ),
    ("judge_of", 'judge(grader, "Says cats?") { of = classify }', True, None, {}),
    (
        "judge_own_verdicts",
        'judge(fast, "Polite?") { repeat = 2, pass_rate = 1, replies = [{ output = { pass = true, reason = "Yes." } }, '
        '{ output = { pass = false, reason = "Rude." } }] }',
        False,
        "the judge passed it 1 of 2 times (50%, 100% needed); it said: Rude.",
        {},
    ),
    (
        "judge_unscripted",
        'judge(grader, "Polite?") { repeat = 2 }',
        False,
        "the judge passed it 0 of 2 times (0%, 100% needed); it said: the judge failed",
        {"grader": "[]"},
    ),
    # --- a run that fails, or stops with nothing to answer it ---
    ("run_failed", 'output == "published"', False, "the run failed: ", {"writer": "[]"}),
    ("run_failed_expected", 'run.stop_reason == "error"', True, None, {"writer": "[]"}),
]

EXTRA = {
    # Not a replies change: the test itself gives no answer, or no decision.
    "no_answer": ('output == "published"', False, "the run stopped at ask `confirm` and the test gives no answer"),
    "no_decision": ('output == "published"', False, "the run asked approval for `publish` and the test gives no"),
}


def _test_block(name: str, expect: str, replies: dict[str, str], answers: str, decisions: str) -> str:
    merged = {**REPLIES, **replies}
    if "judge(grader" not in expect:
        del merged["grader"]  # a model's replies are named only by a test that judges with it
    lines = [f"test {name} {{", '  input = { topic = "cats" }', "  replies = {"]
    lines += [f"    {key} = {value}" for key, value in merged.items()]
    lines += ["  }", f"  answers = {answers}", f"  decisions = {decisions}", f"  expect {expect}", "}", ""]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    folder = tmp_path_factory.mktemp("spectest")
    for name in ("spec.plait", "tools.py"):
        shutil.copy(FIXTURE / name, folder / name)
    blocks = ['plait 0.2\nimport "spec.plait"\n']
    for name, expect, _, _, replies in CASES:
        blocks.append(_test_block(name, expect, replies, ANSWERS, DECISIONS))
    blocks.append(_test_block("no_answer", EXTRA["no_answer"][0], {}, "{}", DECISIONS))
    blocks.append(_test_block("no_decision", EXTRA["no_decision"][0], {}, ANSWERS, "{}"))
    path = folder / "spec.test.plait"
    path.write_text("\n".join(blocks), encoding="utf-8")
    [spec] = load_tests([path])
    assert [d.message for d in spec.diagnostics if d.is_error] == []
    session = Session(jobs=4)
    try:
        ran = asyncio.run(session.run([spec]))
    finally:
        session.close()
    return {o.test.name: o for o in ran}


def _messages(outcome: Outcome) -> list[str]:
    return [f.message for f in outcome.failures]


@pytest.mark.parametrize(("name", "expect", "holds", "message", "replies"), CASES, ids=[c[0] for c in CASES])
def test_an_expectation_passes_or_fails_with_its_message(outcomes, name, expect, holds, message, replies):
    outcome = outcomes[name]
    if holds:
        assert outcome.status == "passed", _messages(outcome)
    else:
        assert outcome.status == "failed"
        assert len(outcome.failures) == 1
        assert message in outcome.failures[0].message


@pytest.mark.parametrize("name", sorted(EXTRA))
def test_a_stop_the_test_does_not_answer_fails_it_and_says_how_to_answer(outcomes, name):
    outcome = outcomes[name]
    assert outcome.status == "failed"
    assert EXTRA[name][2] in outcome.failures[0].message
    assert outcome.failures[0].expectation is None  # the run, not an expectation, failed it


def test_a_failed_expectation_keeps_its_place_and_text(outcomes):
    failure = outcomes["route_case_fails"].failures[0]
    assert failure.expectation is not None
    assert failure.expectation.text == 'expect case(pick) == "short"'
    assert failure.expectation.span.file.endswith("spec.test.plait")


def test_every_run_is_journaled_with_its_id(outcomes):
    assert all(o.run_id for o in outcomes.values())
    assert len({o.run_id for o in outcomes.values()}) == len(outcomes)


def test_a_test_that_cannot_run_is_an_error_and_the_others_still_run(tmp_path, monkeypatch):
    from plait.spectest import runner

    for name in ("spec.plait", "tools.py"):
        shutil.copy(FIXTURE / name, tmp_path / name)
    path = tmp_path / "two.test.plait"
    path.write_text(
        'plait 0.2\nimport "spec.plait"\n'
        + _test_block("broken", "items(each) == 3", {}, ANSWERS, DECISIONS)
        + _test_block("fine", "items(each) == 3", {}, ANSWERS, DECISIONS),
        encoding="utf-8",
    )
    made = runner.providers_for

    def providers_for(test, program, live=False):
        if test.name == "broken":
            raise RuntimeError("no providers today")
        return made(test, program, live)

    monkeypatch.setattr(runner, "providers_for", providers_for)
    session = Session()
    try:
        ran = {o.test.name: o for o in asyncio.run(session.run(load_tests([path])))}
    finally:
        session.close()
    assert (ran["broken"].status, ran["broken"].message) == (
        "error",
        "the test could not run: RuntimeError: no providers today",
    )
    assert ran["fine"].status == "passed"
