"""route: the subject's value picks one case, which runs on the route's own input; decisions are recorded."""

from __future__ import annotations

from plait.core.kinds import StepNode
from plait.core.kinds import ChainNode, RouteCase, RouteNode
from runtime_helpers import drain, go, make, program, record

CASES = (RouteCase("billing", "billing"), RouteCase("tech", "tech"))


def triage(default: str | None = "sales", subject: tuple[str, ...] = ("input", "category")):
    p = program(
        chains=[ChainNode(name="main", elements=("classify", "triage"))],
        routes=[RouteNode(name="triage", subject=subject, cases=CASES, otherwise=default)],
        steps=[
            StepNode(name="classify", model="m", output=record(category="string", summary="string")),
            StepNode(name="billing", model="m", prompt="Billing: {{input.summary}}"),
            StepNode(name="tech", model="m", prompt="Tech: {{input}}"),
            StepNode(name="sales", model="m", prompt="Sales: {{input.summary}}"),
        ],
    )
    return p


def replies(category, answer="handled"):
    return {
        "classify": [{"output": {"category": category, "summary": "card declined"}}],
        "billing": [{"text": answer}],
        "tech": [{"text": answer}],
        "sales": [{"text": answer}],
    }


def test_the_matching_case_runs_on_the_routes_input_and_its_output_is_the_routes():
    engine = make(models={"m": replies("tech", "rebooted")}, agents={}, program=triage())
    result = go(engine.run("my laptop is on fire"))
    assert result.stop_reason == "done" and result.output == "rebooted"
    prompts = [r["messages"][0].text for r in engine.providers["m"].requests]
    assert prompts[1] == 'Tech: {"category": "tech", "summary": "card declined"}'  # the route's input, unchanged
    [decision] = result.to_dict()["decisions"]
    assert decision == {
        "kind": "route",
        "name": "triage",
        "path": ["main", "triage"],
        "subject": "input.category",
        "value": "tech",
        "case": "tech",
        "target": "tech",
    }


def test_else_takes_a_value_no_case_lists():
    engine = make(models={"m": replies("refund")}, agents={}, program=triage())
    result = go(engine.run("x"))
    assert result.output == "handled"
    assert engine.providers["m"].requests[1]["messages"][0].text == "Sales: card declined"
    assert result.report.decisions[0]["case"] == "else" and result.report.decisions[0]["value"] == "refund"


def test_an_unmatched_value_without_else_fails_the_run_naming_the_value():
    engine = make(models={"m": replies("refund")}, agents={}, program=triage(default=None))
    result = go(engine.run("x"))
    assert result.stop_reason == "error" and result.error.kind == "route_unmatched"
    assert (
        '"refund"' in result.error.message
        and "triage" in result.error.message
        and '"billing", "tech"' in result.error.message
    )


def test_a_bool_case_matches_only_a_bool():
    p = program(
        routes=[RouteNode(name="main", subject=("input", "ok"), cases=(RouteCase(True, "yes"), RouteCase(1, "one")))],
        steps=[StepNode(name="yes", model="m", prompt="yes"), StepNode(name="one", model="m", prompt="one")],
    )
    engine = make(models={"m": {"yes": [{"text": "Y"}], "one": [{"text": "1"}]}}, agents={}, program=p)
    assert go(engine.run({"ok": 1})).output == "1"
    assert go(engine.run({"ok": True})).output == "Y"


def test_the_subject_may_read_the_run_input_and_a_missing_field_is_named():
    p = triage(subject=("run", "input", "category"))
    engine = make(models={"m": replies("ignored", "b")}, agents={}, program=p)
    assert go(engine.run({"category": "billing"})).output == "b"
    p = triage(subject=("input", "kind"))
    result = go(make(models={"m": replies("tech")}, agents={}, program=p).run("x"))
    assert result.error.kind == "route_subject_missing" and "no field `kind`" in result.error.message


def test_the_route_event_says_which_case_and_why():
    engine = make(models={"m": replies("billing")}, agents={}, program=triage())
    events = go(drain(engine.start("x")))
    [route] = [e for e in events if e.type == "route"]
    assert route.data == {
        "route": "triage",
        "subject": "input.category",
        "value": "billing",
        "case": "billing",
        "target": "billing",
    }
    assert route.path == ("main", "triage")
