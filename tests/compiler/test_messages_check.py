"""A step's `messages = [system("..."), user("..."), assistant("..."), ...]` through the compiler's stages: the
shape (P230), its templates checked as a prompt's, the graph's JSON, the drawing, `plait diff` and `plait fmt`."""

from __future__ import annotations

from checks_helpers import clean, codes, compile_text

from plait.compiler.diff import diff_graphs
from plait.compiler.pipeline import compile_spec
from plait.compiler.render.api import render
from plait.core.graph import record_json
from plait.dsl.formatter import format_text

SPEC = """plait 0.3
model fast = "openai/gpt-4o-mini"
input { text: string }
step translate {
  model    = fast
  messages = [
    system("You translate into French."),
    user("Good morning"),
    assistant("Bonjour"),
    user("{{input.text}}"),
  ]
}
"""


def test_messages_check_clean_and_are_on_the_graph(tmp_path):
    result = compile_text(SPEC, tmp_path)
    clean(result)
    assert record_json(result.graph.node("translate"))["messages"] == [
        {"role": "system", "content": "You translate into French."},
        {"role": "user", "content": "Good morning"},
        {"role": "assistant", "content": "Bonjour"},
        {"role": "user", "content": "{{input.text}}"},
    ]


def test_a_template_in_a_message_is_checked_as_a_prompts_is(tmp_path):
    result = compile_text(SPEC.replace("{{input.text}}", "{{input.txt}}"), tmp_path)
    assert codes(result) == ["P402"]


def test_the_shapes_a_model_cannot_be_sent_are_p230(tmp_path):
    cases = [
        ('user("{{input.text}}"),\n  ]', "]"),  # ends with the assistant's message
        ('assistant("Bonjour")', 'assistant("Bonjour"), system("late")'),
        ('user("Good morning")', 'usr("Good morning")'),
        ('user("Good morning")', "user(1)"),
    ]
    for old, new in cases:
        assert codes(compile_text(SPEC.replace(old, new), tmp_path)) == ["P230"], new
    assert codes(compile_text(SPEC.replace("model    = fast", 'model = fast\n  prompt = "Hi"'), tmp_path)) == ["P230"]
    assert codes(compile_text(SPEC.replace('system("You translate into French."),', ""), tmp_path)) == []
    empty = SPEC[: SPEC.index("messages")] + "messages = []\n}\n"
    assert codes(compile_text(empty, tmp_path)) == ["P230"]


def test_the_drawing_lists_the_roles():
    dot = render(compile_spec(SPEC, path="spec.plait").graph, "dot")
    assert "messages system, user, assistant, user" in dot


def test_a_changed_message_is_a_contract_change():
    old = compile_spec(SPEC, path="old.plait").graph
    new = compile_spec(SPEC.replace("Bonjour", "Bonjour !"), path="new.plait").graph
    changes = diff_graphs(old, new)
    assert [(c.what, c.subject, c.field) for c in changes] == [("contract", "translate", "messages")]


def test_fmt_keeps_the_messages():
    text, problems = format_text(SPEC)
    assert problems == [] and text is not None
    assert 'assistant("Bonjour")' in text and 'system("You translate into French.")' in text
    again, _ = format_text(text)
    assert again == text


def test_the_editor_offers_the_roles_inside_messages():
    from plait.ide.complete import complete

    text = 'model m = "openai/gpt-4o-mini"\nstep s {\n  model    = m\n  messages = [system("Be brief."), us'
    assert {"system", "user", "assistant"} <= {c.label for c in complete(text, len(text), {}, [])}
