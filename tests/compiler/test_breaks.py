"""`LITERAL -> break [LOOP]` in a route (plait 0.3): which loop each case leaves, what the loop's output can then
be, how `plait fmt` writes it, and what `plait diff` says when it changes. The codes' goldens are in
tests/fixtures/check (p321_*, p322_*, p323_*); the run is tests/runtime/test_runtime_break.py."""

from __future__ import annotations

from plait.compiler.diff import diff_graphs
from plait.compiler.pipeline import compile_spec
from plait.core import types as t
from plait.dsl.formatter import format_text

NESTED = """plait 0.3
model m = "openai/gpt-4o-mini"
step work { model = m, prompt = "w {{input}}", output { state: "more" | "next" | "stop" } }
step rest { model = m, prompt = "rest" }
route judge on input.state {
  "more" -> rest
  "next" -> break
  "stop" -> break outer
}
loop inner = work -> judge { max_iterations = 3 }
step tally { model = m, prompt = "t {{input}}" }
loop outer = inner -> tally { max_iterations = 3 }
chain main = outer
"""


def codes(result) -> list[str]:
    return [d.code for d in result.diagnostics]


def test_a_bare_break_leaves_the_innermost_loop_and_a_named_one_that_loop():
    result = compile_spec(NESTED)
    assert codes(result) == []
    route = result.graph.node("judge")
    assert [(b.value, b.leaves) for b in route.breaks] == [("next", "inner"), ("stop", "outer")]
    # A break case is no runnable's case: the route's own cases are the rest.
    assert [(c.value, c.target) for c in route.cases] == [("more", "rest")]
    edges = [(e.source, e.target, e.label) for e in result.graph.edges("break")]
    assert edges == [("judge", "inner", '"next"'), ("judge", "outer", '"stop"')]
    assert result.graph.to_json()["nodes"][3]["attrs"]["breaks"] == [
        {"value": "next", "leaves": "inner"},
        {"value": "stop", "leaves": "outer"},
    ]


def test_a_loop_a_break_can_leave_outputs_what_the_route_received_too():
    result = compile_spec(NESTED)
    # inner's body ends with judge (rest's text), or breaks with what judge received: work's record.
    inner = result.graph.node("inner").output
    assert isinstance(inner, t.UnionType)
    text, record = sorted(inner.options, key=lambda o: isinstance(o, t.ObjectType))
    assert text == t.TEXT and isinstance(record, t.ObjectType)
    assert [f.name for f in record.fields] == ["state"]


def test_an_else_case_may_break_and_the_cases_still_cover_the_subject():
    spec = NESTED.replace('"next" -> break\n  "stop" -> break outer', "else -> break")
    result = compile_spec(spec)
    assert codes(result) == []
    assert [(b.value, b.leaves) for b in result.graph.node("judge").breaks] == [(None, "inner")]
    missing = compile_spec(NESTED.replace('  "stop" -> break outer\n', ""))
    assert codes(missing) == ["P310"]  # "stop" is covered by no case


def test_break_names_a_loop_and_nothing_else():
    assert codes(compile_spec(NESTED.replace("break outer", "break outre"))) == ["P101"]
    assert codes(compile_spec(NESTED.replace("break outer", "break tally"))) == ["P103"]
    assert codes(compile_spec(NESTED.replace('"stop" -> break outer', '"stop" -> rest tally'))) == ["P323"]


def test_a_runnable_named_break_keeps_its_0_2_meaning():
    spec = """plait 0.2
model m = "openai/gpt-4o-mini"
step classify { model = m, prompt = "c {{input}}", output { kind: "a" | "b" } }
step break { model = m, prompt = "stop here" }
step other { model = m, prompt = "go on" }
route pick on input.kind {
  "a" -> break
  "b" -> other
}
chain main = classify -> pick
"""
    result = compile_spec(spec)
    assert codes(result) == []
    route = result.graph.node("pick")
    assert route.breaks == () and [c.target for c in route.cases] == ["break", "other"]


def test_fmt_writes_break_and_its_loop_aligned_with_the_other_cases():
    messy = NESTED.replace('  "stop" -> break outer', '  "stop"   ->   break    outer').replace(
        '  "more" -> rest', '  "more"->rest'
    )
    formatted, diagnostics = format_text(messy)
    assert diagnostics == []
    assert '  "more" -> rest\n  "next" -> break\n  "stop" -> break outer\n' in formatted
    inline = NESTED.replace(
        'route judge on input.state {\n  "more" -> rest\n  "next" -> break\n  "stop" -> break outer\n}',
        'route judge on input.state { "more" -> rest, "next" -> break, "stop" -> break outer }',
    )
    formatted, _ = format_text(inline)
    assert 'route judge on input.state { "more" -> rest, "next" -> break, "stop" -> break outer }' in formatted


def test_diff_calls_a_case_that_now_breaks_or_leaves_another_loop_a_contract_change():
    old = compile_spec(NESTED).graph
    other = compile_spec(NESTED.replace("break outer", "break")).graph
    changes = [c for c in diff_graphs(old, other)]
    said = [(c.what, c.op, c.subject, c.field, c.old, c.new) for c in changes]
    assert ("contract", "changed", "judge", 'case "stop"', "break outer", "break inner") in said
    # The edges a break draws are the route's cases again: not reported twice.
    assert not [c for c in changes if c.what == "edge"]
    rest = compile_spec(NESTED.replace('"next" -> break', '"next" -> rest')).graph
    said = [(c.what, c.field, c.old, c.new) for c in diff_graphs(old, rest)]
    assert ("contract", 'case "next"', "break inner", "rest") in said
