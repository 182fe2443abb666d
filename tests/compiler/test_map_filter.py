"""A map's `filter` and `on_error = drop` through the compiler's stages: the check, the graph's JSON, the drawing,
`plait diff` and `plait fmt`."""

from __future__ import annotations

from checks_helpers import clean, codes, compile_text

from plait.compiler.diff import diff_graphs
from plait.compiler.pipeline import compile_spec
from plait.compiler.render.api import render
from plait.core.graph import record_json
from plait.dsl.formatter import format_text

SPEC = """plait 0.3
model fast = "openai/gpt-4o-mini"
step plan {
  model  = fast
  prompt = "Plan {{input}}"
  output { sections: list[object { title: string, kind: "intro" | "body" }] }
}
step write { model = fast, prompt = "Write {{input.title}}" }
map write_all = write { over = plan.sections, filter = kind == "body", on_error = drop }
chain main = plan -> write_all
"""


def test_a_filter_over_the_items_fields_checks_clean_and_is_on_the_graph(tmp_path):
    result = compile_text(SPEC, tmp_path)
    clean(result)
    attrs = record_json(result.graph.node("write_all"))
    assert attrs["filter"] == 'kind == "body"' and attrs["on_error"] == "drop"


def test_a_filter_reading_a_field_the_item_lacks_is_p313(tmp_path):
    result = compile_text(SPEC.replace('kind == "body"', 'knd == "body"'), tmp_path)
    assert codes(result) == ["P313"]
    assert "`filter` reads `knd`, which an item of `plan.sections` does not have" in result.diagnostics[0].message


def test_drop_is_a_maps_word_not_a_parallels(tmp_path):
    text = SPEC + "parallel both = [plan, write] { on_error = drop }\n"
    assert "P204" in codes(compile_text(text, tmp_path))


def test_the_drawing_says_which_items_run():
    graph = compile_spec(SPEC, path="spec.plait").graph
    assert "where kind == &quot;body&quot;" in render(graph, "dot")
    assert "where kind == #quot;body#quot;" in render(graph, "mermaid")


def test_a_changed_filter_is_a_contract_change():
    old = compile_spec(SPEC, path="old.plait").graph
    new = compile_spec(SPEC.replace('kind == "body"', 'kind == "intro"'), path="new.plait").graph
    (change,) = diff_graphs(old, new)
    assert (change.what, change.subject, change.field) == ("contract", "write_all", "filter")


def test_fmt_keeps_the_filter():
    text, problems = format_text(SPEC)
    assert problems == [] and text is not None
    assert 'filter = kind == "body"' in text and "on_error = drop" in text
