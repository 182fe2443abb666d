"""`tool_choice` on an agent or a model: the three choices, or one of the agent's own tools (issue 27)."""

from __future__ import annotations

import pytest

from checks_helpers import assert_at, clean, compile_text, only

TOOLS = """
tool lookup "Look a word up." { run = http(GET, "https://example.com/{{q}}")
  params { q: string } }
tool save "Save a note." { run = http(POST, "https://example.com/notes") }
"""


def _agent(choice: str, tools: str = "[lookup, save]", model: str = "") -> str:
    return (
        f'model fast = "openai/gpt-4o-mini" {{ {model} }}\n'
        + TOOLS
        + f"agent main {{ model = fast\n  tools = {tools}\n  tool_choice = {choice} }}\n"
    )


@pytest.mark.parametrize("choice", ["auto", "none", "required", "lookup", '"save"'])
def test_a_choice_or_one_of_the_agents_tools_checks_clean_and_reaches_the_graph(tmp_path, choice: str) -> None:
    result = compile_text(_agent(choice), tmp_path)
    clean(result)
    assert result.graph.node("main").tool_choice == choice.strip('"')


def test_a_tool_the_agent_does_not_have_is_an_error_naming_its_tools_with_a_suggestion(tmp_path) -> None:
    text = _agent("lookpu")
    d = only(compile_text(text, tmp_path), "P204")
    assert_at(d, text, "lookpu")
    assert "names no tool of agent `main`" in d.message and "`lookup`" in d.message and "`required`" in d.message
    assert d.fix is not None and d.fix.replacement == "lookup"


def test_a_tool_declared_but_not_given_to_the_agent_is_an_error(tmp_path) -> None:
    text = _agent("save", tools="[lookup]")
    d = only(compile_text(text, tmp_path), "P204")
    assert "has no `save` among its `tools`" in d.message and d.fix.message == "add `save` to `tools`"


def test_an_agent_without_tools_is_told_the_choice_does_nothing(tmp_path) -> None:
    text = 'model fast = "openai/gpt-4o-mini"\nagent main { model = fast\n  tool_choice = required }\n'
    d = only(compile_text(text, tmp_path), "P201")
    assert "has no `tools`" in d.message
    assert_at(d, text, "required")


def test_a_model_takes_the_three_choices_as_its_agents_default(tmp_path) -> None:
    result = compile_text(_agent("auto", model="tool_choice = required").replace("  tool_choice = auto", ""), tmp_path)
    clean(result)
    assert result.graph.node("fast").tool_choice == "required"


def test_a_tool_name_on_a_model_is_an_error(tmp_path) -> None:
    text = _agent("auto", model="tool_choice = lookup")
    d = only(compile_text(text, tmp_path), "P204")
    assert "`lookup` is not a valid `tool_choice`" in d.message
