"""plait 0.3 `with { name: path }`: bindings checked by the rules of `{{path}}`, the bound record as the runnable's
input, record builders, and what a binding may not be (src/plait/compiler/bindings.py, passes/check_flow.py)."""

from __future__ import annotations

from checks_helpers import assert_at, clean, codes, compile_text, only

HEAD = 'plait 0.3\nmodel fast = "openai/gpt-4o-mini"\ninput { topic: string }\n'
PLANNER = """
step planner {
  model  = fast
  prompt = "Plan {{run.input.topic}}"
  output { title: string, tasks: list[string] }
}
step write { model = fast, prompt = "Write {{input}}" }
map write_all = write { over = planner.tasks }
"""


def test_the_language_example_checks_clean_and_a_builder_outputs_its_record(tmp_path):
    text = (
        HEAD
        + PLANNER
        + """
step pack { with { title: planner.title, sections: write_all, topic: run.input.topic } }
step edit {
  with { report: pack, tasks: planner.tasks }
  model  = fast
  prompt = "Edit {{input.report.title}} ({{input.tasks}}): {{input.report.sections}}"
}
agent reviewer {
  with   { draft: edit, topic: run.input.topic }
  model  = fast
  prompt = "Review {{input.draft}} on {{input.topic}}"
}
chain main = planner -> write_all -> pack -> edit -> reviewer
"""
    )
    result = compile_text(text, tmp_path)
    clean(result)
    pack = result.graph.node("pack")
    assert pack.bindings == {
        "title": ("planner", "title"),
        "sections": ("write_all",),
        "topic": ("run", "input", "topic"),
    }
    assert [f.name for f in pack.output.fields] == ["title", "sections", "topic"]
    assert pack.model is None and result.graph.node("reviewer").prompt == "Review {{input.draft}} on {{input.topic}}"


def test_what_follows_a_builder_is_checked_against_its_record_where_it_runs(tmp_path):
    text = (
        HEAD
        + PLANNER
        + """
step pack { with { first: input.title, all: input } }
step after { model = fast, prompt = "{{input.first}} {{input.all.tasks}} {{input.nope}}" }
chain main = planner -> pack -> after
"""
    )
    d = only(compile_text(text, tmp_path), "P402")
    assert d.message == "`{{input.nope}}` does not resolve: `pack`'s output has no field `nope`"


def test_a_binding_is_checked_as_a_template_path_is_and_named_without_braces(tmp_path):
    text = (
        HEAD
        + PLANNER
        + """
step summary {
  with { title: planner.titel, later: after, what: nothing.here }
  model  = fast
  prompt = "{{input.title}} {{input.later}} {{input.what}}"
}
step after { model = fast, prompt = "x" }
chain main = planner -> summary -> after
"""
    )
    result = compile_text(text, tmp_path)
    messages = {d.code: d.message for d in result.diagnostics}
    assert messages["P402"] == "`planner.titel` does not resolve: `planner`'s output has no field `titel`"
    assert messages["P316"] == "`after` reads `after`, which has not finished on every path to `summary`"
    assert messages["P401"].startswith("`nothing.here` does not resolve in the `with` of `summary`")
    assert_at(only(result, "P402"), text, "planner.titel")


def test_the_runnables_templates_read_the_bound_record_not_the_chains_input(tmp_path):
    text = (
        HEAD
        + PLANNER
        + """
step summary {
  with { title: planner.title }
  model  = fast
  prompt = "{{input.title}} {{input.tasks}}"
}
chain main = planner -> summary
"""
    )
    d = only(compile_text(text, tmp_path), "P402")
    assert d.message == "`{{input.tasks}}` does not resolve: the `with` of `summary` has no field `tasks`"
    assert d.notes == ("its fields are `title`",)


def test_a_binding_must_be_a_path_and_is_bound_once(tmp_path):
    text = (
        HEAD + 'step s {\n  with { a: input, b: "text", a: input.topic }\n  model = fast\n  prompt = "{{input}}"\n}\n'
    )
    result = compile_text(text, tmp_path)
    assert (
        only(result, "P203").message
        == "`with` binds `b` to a path like `planner.tasks` or `input.topic`, found a string"
    )
    assert only(result, "P205").message == "`with` binds `a` twice"


def test_a_builder_takes_no_model_settings(tmp_path):
    text = HEAD + "step s {\n  with { t: input.topic }\n  temperature = 0.2\n  output { t: string }\n}\n"
    found = [d.message for d in compile_text(text, tmp_path).diagnostics if d.code == "P201"]
    assert found == [
        "step `s` builds its output from `with` (it has no `model` or `run`), so `temperature` does nothing",
        "step `s` builds its output from `with` (it has no `model` or `run`), so `output` does nothing",
    ]


def test_a_binding_no_template_reads_is_p320_but_not_for_code_steps_builders_or_agents_without_prompt(tmp_path):
    text = (
        HEAD
        + PLANNER
        + """
step summary {
  with { title: planner.title, tasks: planner.tasks }
  model  = fast
  prompt = "{{input.title}}"
}
step whole {
  with { title: planner.title, tasks: planner.tasks }
  model  = fast
  prompt = "{{input}}"
}
agent a { with { title: planner.title }, model = fast }
step b { with { title: planner.title } }
ask c "Fine?" { with { title: planner.title } }
chain main = planner -> summary -> whole -> a -> b -> c
"""
    )
    result = compile_text(text, tmp_path)
    assert [(d.code, d.message) for d in result.diagnostics if d.code not in ("P601", "P316")] == [
        ("P320", "`with` binds `tasks`, which step `summary` never reads"),
        ("P320", "`with` binds `title`, which ask `c` never reads"),
    ]


def test_a_code_steps_function_must_take_its_bindings(tmp_path):
    text = (
        HEAD
        + """
state { seen: int? }
step outline {
  model  = fast
  prompt = "x"
  output { items: list[string] }
}
step each { with { item: map.item, at: map.index, seen: state.seen }, run = python("tools:each") }
step wrong { with { item: map.item }, run = python("tools:wrong") }
map all = each -> wrong { over = input.items }
chain main = outline -> all
"""
    )
    files = {
        "tools.py": "def each(item: str, at: int, seen: int | None) -> str:\n    return item\n\n"
        "def wrong(input: str) -> str:\n    return input\n"
    }
    found = [d.message for d in compile_text(text, tmp_path, files=files).diagnostics if d.code == "P319"]
    assert found == [
        "code step `wrong` calls `tools:wrong` wrongly: it receives `item`, which the function does not take",
        "code step `wrong` calls `tools:wrong` wrongly: the function requires `input`, which its input does not always give",
    ]


def test_with_is_still_a_name_and_0_2_specs_are_unchanged(tmp_path):
    text = 'plait 0.2\nmodel fast = "openai/gpt-4o-mini"\nstep with { model = fast, prompt = "{{input}}" }\n'
    clean(compile_text(text, tmp_path))
    assert codes(compile_text(text.replace("0.2", "0.3"), tmp_path)) == []


def test_an_agents_prompt_is_a_template_checked_against_what_it_receives(tmp_path):
    text = (
        HEAD
        + PLANNER.split("step write")[0]
        + ('agent a { model = fast, prompt = "Do {{input.title}} and {{input.nope}}" }\nchain main = planner -> a\n')
    )
    d = only(compile_text(text, tmp_path), "P402")
    assert d.message == "`{{input.nope}}` does not resolve: `planner`'s output has no field `nope`"
