"""`validate = python("module:function")` on a step or an agent through the compiler's stages: what the check
accepts and refuses (never importing the module), the graph's JSON, the drawing, `plait diff` and `plait fmt`."""

from __future__ import annotations

from checks_helpers import clean, codes, compile_text

from plait.compiler.diff import diff_graphs
from plait.compiler.render.api import render
from plait.core.graph import record_json
from plait.dsl.formatter import format_text

SPEC = """plait 0.3
model fast = "openai/gpt-4o-mini"
step count {
  model    = fast
  prompt   = "Count {{input}}"
  validate = python("checks:even")
  output { count: int }
}
agent say { model = fast, validate = python("checks:short") }
chain main = count -> say
"""


def _project(tmp_path, spec=SPEC):
    # The module raises on import: `plait check` must never import it.
    (tmp_path / "checks.py").write_text("raise SystemExit('imported')\ndef even(a): ...\ndef short(a): ...\n")
    return compile_text(spec, tmp_path)


def test_a_validator_checks_clean_without_importing_and_is_on_the_graph(tmp_path):
    result = _project(tmp_path)
    clean(result)
    assert record_json(result.graph.node("count"))["validate"]["target"] == "checks:even"
    assert record_json(result.graph.node("say"))["validate"]["target"] == "checks:short"


def test_a_validator_is_python_only(tmp_path):
    result = _project(tmp_path, SPEC.replace('python("checks:short")', 'http(POST, "https://x.example")'))
    assert codes(result) == ["P203"]
    assert '`validate` must be `python("module:function")`' in result.diagnostics[0].message


def test_a_validator_module_that_is_not_there_is_p317(tmp_path):
    assert codes(_project(tmp_path, SPEC.replace("checks:short", "nowhere:short"))) == ["P317"]


def test_a_code_step_has_no_answer_to_validate(tmp_path):
    spec = SPEC + 'step calc { run = python("checks:even"), validate = python("checks:even") }\n'
    result = _project(tmp_path, spec)
    assert "P201" in codes(result)
    [found] = [d for d in result.diagnostics if d.code == "P201"]
    assert "runs python code, so `validate` does nothing" in found.message


def test_the_drawing_names_the_validator(tmp_path):
    dot = render(_project(tmp_path).graph, "dot")
    assert "validate checks:even" in dot and "validate checks:short" in dot


def test_a_changed_validator_is_a_contract_change(tmp_path):
    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    old = _project(tmp_path / "old").graph
    new = _project(tmp_path / "new", SPEC.replace("checks:even", "checks:short")).graph
    changes = diff_graphs(old, new)
    assert [(c.what, c.subject, c.field) for c in changes] == [("contract", "count", "validate")]


def test_fmt_keeps_the_validator():
    text, problems = format_text(SPEC)
    assert problems == [] and text is not None and 'validate = python("checks:even")' in text
