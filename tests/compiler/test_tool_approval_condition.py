"""A tool's `approval = CONDITION` over its arguments through the compiler's stages: the check (P313 against
`params`), the graph's JSON, the drawing, `plait diff` and `plait fmt`."""

from __future__ import annotations

from checks_helpers import clean, codes, compile_text

from plait.compiler.diff import diff_graphs
from plait.compiler.pipeline import compile_spec
from plait.compiler.render.api import render
from plait.core.graph import record_json
from plait.dsl.formatter import format_text

SPEC = """plait 0.3
model fast = "openai/gpt-4o-mini"
tool pay "Pay someone" {
  run      = http(POST, "https://bank.example/pay")
  approval = amount > 100 or to != "alice"
  params { amount: int, to: string }
}
agent main { model = fast, tools = [pay] }
"""


def test_a_condition_over_the_arguments_checks_clean_and_is_on_the_graph(tmp_path):
    result = compile_text(SPEC, tmp_path)
    clean(result)
    assert record_json(result.graph.node("pay"))["approval"] == 'amount > 100 or to != "alice"'


def test_required_and_never_stay_booleans(tmp_path):
    for word, value in (("required", True), ("never", False)):
        result = compile_text(SPEC.replace('amount > 100 or to != "alice"', word), tmp_path)
        clean(result)
        assert result.graph.node("pay").approval is value


def test_a_condition_reading_an_argument_the_tool_lacks_is_p313(tmp_path):
    result = compile_text(SPEC.replace("amount > 100", "amont > 100"), tmp_path)
    assert codes(result) == ["P313"]
    message = result.diagnostics[0].message
    assert message == "`approval` reads `amont`, which the `params` of tool `pay` does not have"


def test_an_order_comparison_on_text_is_p313(tmp_path):
    assert codes(compile_text(SPEC.replace("amount > 100", "to > 100"), tmp_path)) == ["P313"]


def test_a_misspelt_word_is_still_p204(tmp_path):
    assert codes(compile_text(SPEC.replace('amount > 100 or to != "alice"', "requird"), tmp_path)) == ["P204"]


def test_the_drawing_says_when_a_call_waits():
    dot = render(compile_spec(SPEC, path="spec.plait").graph, "dot")
    assert "tools pay [approval when amount &gt; 100" in dot


def test_a_changed_condition_is_a_contract_change():
    old = compile_spec(SPEC, path="old.plait").graph
    new = compile_spec(SPEC.replace("amount > 100", "amount > 500"), path="new.plait").graph
    (change,) = diff_graphs(old, new)
    assert (change.what, change.subject, change.field) == ("contract", "pay", "approval")


def test_fmt_keeps_the_condition():
    text, problems = format_text(SPEC)
    assert problems == [] and text is not None and 'approval = amount > 100 or to != "alice"' in text


def test_an_expanded_turn_names_the_condition_at_its_approval_step():
    from plait.compiler.render.api import RenderOptions

    graph = compile_spec(SPEC, path="spec.plait").graph
    dot = render(graph, "dot", RenderOptions(expand=("main",)))
    assert "approval pay when amount &gt; 100" in dot
