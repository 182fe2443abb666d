"""0.2 typed data flow: template paths against the type that reaches each place, dominance of `{{NAME}}`
reads, routes, loops, maps, state and run input (passes/check_flow, src/plait/compiler/flow.py, src/plait/compiler/paths.py)."""

from __future__ import annotations

from checks_helpers import codes, compile_text, only

HEAD = 'plait 0.2\nmodel fast = "openai/gpt-4o-mini"\n'
CLASSIFY = """
step classify {
  model  = fast
  prompt = "Classify {{input}}"
  output { topic: "x" | "y", summary: string }
}
"""


def test_language_example_checks_clean(tmp_path):
    text = (
        HEAD
        + """
input {
  ticket:   string "The customer's message"
  customer: string
}
state { order_id: string? }
step classify "Sort a ticket." {
  model  = fast
  prompt = "Ticket from {{run.input.customer}}:\\n{{run.input.ticket}}"
  output {
    category: "billing" | "tech" | "sales"
    urgency:  int "1 (low) to 5 (high)"
    summary:  string
  }
}
step billing { model = fast, prompt = "Billing: {{input.summary}} {{state.order_id}}" }
step tech_support { model = fast, prompt = "Tech: {{input.summary}} ({{classify.urgency}})" }
step sales { model = fast, prompt = "Sales: {{classify.summary}}" }
route triage on input.category {
  "billing" -> billing
  "tech"    -> tech_support
  else      -> sales
}
step draft { model = fast, prompt = "Reply to {{run.input.ticket}} after {{input}}; last time: {{loop.last.feedback}}" }
step review "Grade a draft." {
  model  = fast
  prompt = "Grade this reply (round {{loop.iteration}}):\\n{{input}}"
  output { verdict: "accept" | "revise", feedback: string }
}
loop polish = draft -> review {
  until          = verdict == "accept"
  max_iterations = 3
  on_exhausted   = fail
}
step outline {
  model  = fast
  prompt = "Plan the sections of a report on {{input.feedback}}"
  output { sections: list[object { title: string, brief: string }] }
}
step write_section { model = fast, prompt = "Write {{input.title}} ({{map.index}}): {{map.item.brief}}" }
map write_all = write_section { over = input.sections, concurrency = 4 }
chain main = classify -> triage -> polish -> outline -> write_all
"""
    )
    result = compile_text(text, tmp_path)
    assert codes(result) == [], [f"{d} {d.message}" for d in result.diagnostics]


def test_a_field_the_producer_does_not_declare_is_named_with_its_declaration(tmp_path):
    text = (
        HEAD
        + CLASSIFY
        + """
step answer { model = fast, prompt = "About {{input.sumary}}" }
chain main = classify -> answer
"""
    )
    d = only(compile_text(text, tmp_path), "P402")
    assert d.message == "`{{input.sumary}}` does not resolve: `classify`'s output has no field `sumary`"
    assert d.fix is not None and d.fix.replacement == "input.summary"
    assert any("`classify`'s output is declared here" in label.message for label in d.labels)


def test_every_place_a_runnable_is_used_is_checked(tmp_path):
    # `answer` reads `input.summary`: fine after `classify`, not after `plain`, which returns text.
    text = (
        HEAD
        + CLASSIFY
        + """
step plain { model = fast, prompt = "{{input}}" }
step answer { model = fast, prompt = "About {{input.summary}}" }
chain one = classify -> answer
chain two = plain -> answer
chain main = one -> two
"""
    )
    d = only(compile_text(text, tmp_path), "P401")
    assert "`answer` receives text from `plain`" in d.message


def test_a_read_of_a_runnable_that_runs_later_is_not_dominated(tmp_path):
    text = (
        HEAD
        + CLASSIFY
        + """
step answer { model = fast, prompt = "About {{classify.summary}}" }
chain main = answer -> classify
"""
    )
    d = only(compile_text(text, tmp_path), "P316")
    assert "reads `classify`, which has not finished on every path to `answer`" in d.message


def test_a_parallel_sibling_or_one_route_case_does_not_dominate(tmp_path):
    text = (
        HEAD
        + CLASSIFY
        + """
step a { model = fast, prompt = "A {{input}}" }
step b { model = fast, prompt = "B {{input}}" }
step peek { model = fast, prompt = "{{a}}" }
route pick on input.topic {
  "x" -> a
  "y" -> b
}
step after { model = fast, prompt = "{{a}} then {{pick}} then {{classify.topic}}" }
chain main = classify -> parallel(a, peek) -> classify -> pick -> after
"""
    )
    found = [d.message for d in compile_text(text, tmp_path).diagnostics if d.code == "P316"]
    assert found == ["`{{a}}` reads `a`, which has not finished on every path to `peek`"]


def test_a_route_case_alone_does_not_dominate_what_follows(tmp_path):
    text = (
        HEAD
        + CLASSIFY
        + """
step a { model = fast, prompt = "A {{input}}" }
step b { model = fast, prompt = "B {{input}}" }
route pick on input.topic {
  "x" -> a
  "y" -> b
}
step after { model = fast, prompt = "{{a}}" }
chain main = classify -> pick -> after
"""
    )
    assert only(compile_text(text, tmp_path), "P316").message.startswith("`{{a}}` reads `a`")


def test_a_loop_body_cannot_read_its_own_loop_but_what_follows_can(tmp_path):
    text = (
        HEAD
        + """
step draft { model = fast, prompt = "{{input}} {{polish}}" }
loop polish = draft { max_iterations = 2 }
step after { model = fast, prompt = "{{polish}} {{draft}}" }
chain main = polish -> after
"""
    )
    found = [d.message for d in compile_text(text, tmp_path).diagnostics if d.code == "P316"]
    assert found == ["`{{polish}}` reads loop `polish` inside its own body, where it has not finished"]


def test_a_map_body_may_not_have_run_at_all(tmp_path):
    text = (
        HEAD
        + """
step outline {
  model  = fast
  prompt = "{{input}}"
  output { items: list[string] }
}
step each { model = fast, prompt = "{{input}} {{map.item}}" }
map all = each { over = input.items }
step after { model = fast, prompt = "{{each}} {{all}}" }
chain main = outline -> all -> after
"""
    )
    found = [d.message for d in compile_text(text, tmp_path).diagnostics if d.code == "P316"]
    assert found == ["`{{each}}` reads `each`, which has not finished on every path to `after`"]


def test_loop_and_map_paths_outside_a_body_do_not_resolve(tmp_path):
    text = HEAD + 'step main { model = fast, prompt = "{{loop.iteration}} {{map.index}}" }\n'
    messages = [d.message for d in compile_text(text, tmp_path).diagnostics]
    assert messages == [
        "`{{loop.iteration}}` does not resolve: `main` does not run inside a loop",
        "`{{map.index}}` does not resolve: `main` does not run inside a map",
    ]


def test_run_input_fields_are_checked_against_the_input_block(tmp_path):
    text = HEAD + 'input { ticket: string }\nstep main { model = fast, prompt = "{{run.input.tiket}}" }\n'
    d = only(compile_text(text, tmp_path), "P402")
    assert "the run's `input` has no field `tiket`" in d.message and d.fix.replacement == "run.input.ticket"


def test_state_is_checked_in_0_2_and_unchecked_in_0_1(tmp_path):
    body = 'model fast = "openai/gpt-4o-mini"\nstep main { model = fast, prompt = "{{state.order}}" }\n'
    assert codes(compile_text("plait 0.1\n" + body, tmp_path)) == []
    assert codes(compile_text(body, tmp_path)) == []
    d = only(compile_text("plait 0.2\n" + body, tmp_path), "P315")
    assert "declares no `state`" in d.message


def test_route_on_bool_must_cover_both(tmp_path):
    text = (
        HEAD
        + """
step check {
  model  = fast
  prompt = "{{input}}"
  output { ok: bool }
}
step yes { model = fast, prompt = "{{input}}" }
route gate on input.ok { true -> yes }
chain main = check -> gate
"""
    )
    assert only(compile_text(text, tmp_path), "P310").message == "route `gate` has no case for false"


def test_map_over_a_list_types_each_item(tmp_path):
    text = (
        HEAD
        + """
step outline {
  model  = fast
  prompt = "{{input}}"
  output { sections: list[object { title: string }] }
}
step each { model = fast, prompt = "{{input.titel}}" }
map all = each { over = input.sections }
chain main = outline -> all
"""
    )
    d = only(compile_text(text, tmp_path), "P402")
    assert "has no field `titel`" in d.message and d.fix.replacement == "input.title"


def test_a_delegated_agent_receives_text(tmp_path):
    text = (
        HEAD
        + """
agent helper "Helps." { model = fast, system = "Task: {{input.task}}" }
agent main { model = fast, tools = [helper] }
"""
    )
    assert "`helper` receives text from `main`" in only(compile_text(text, tmp_path), "P401").message


def test_chains_that_contain_each_other_are_still_checked_once(tmp_path):
    text = (
        HEAD
        + """
step s { model = fast, prompt = "{{input.x}}" }
step p { model = fast, prompt = "{{input}}" }
chain a = p -> s -> b
chain b = a
"""
    )
    found = codes(compile_text(text, tmp_path))
    assert "P304" in found and found.count("P401") == 1


CODE_STEP = (
    HEAD
    + """
step classify {
  model  = fast
  prompt = "{{input}}"
  output { topic: string, note: string? }
}
step tally { run = python("steps:tally") }
chain main = classify -> tally
"""
)


def test_a_code_step_function_must_take_the_fields_that_arrive(tmp_path):
    files = {"steps.py": "def tally(topic: str, extra: int) -> str:\n    return topic\n"}
    found = [d.message for d in compile_text(CODE_STEP, tmp_path, files=files).diagnostics]
    assert found == [
        "code step `tally` calls `steps:tally` wrongly: it receives `note`, which the function does not take",
        "code step `tally` calls `steps:tally` wrongly: the function requires `extra`, which its input does not"
        " always give",
    ]


def test_a_code_step_whose_hints_match_its_input_is_clean(tmp_path):
    files = {"steps.py": "def tally(topic: str, note: str | None = None) -> str:\n    return topic\n"}
    assert codes(compile_text(CODE_STEP, tmp_path, files=files)) == []


def test_the_flow_walk_is_linear_in_the_spec_not_in_its_paths(tmp_path, monkeypatch):
    # Thirty parallels that all contain each other: the places they run multiply without end. The walk
    # stops at a budget proportional to the spec's references instead of a fixed 200,000 instances.
    from plait.compiler import flow
    from plait.compiler.passes import check_flow

    walked: list[int] = []
    budgets: list[int] = []

    def counting(ctx, run):
        budgets.append(flow.instance_budget(ctx))
        walked.append(sum(1 for _ in flow.walk(ctx, run)))
        return iter(())

    monkeypatch.setattr(check_flow, "walk", counting)
    dense = "\n".join(f"parallel p{i} = [{', '.join(f'p{j}' for j in range(30) if j != i)}]" for i in range(30))
    found = codes(compile_text(HEAD + dense + "\n", tmp_path))
    assert "P304" in found  # the containment cycles are still reported
    assert budgets == [flow.INSTANCES_FLOOR + flow.INSTANCES_PER_REFERENCE * 870]  # 30 × 29 branch references
    assert 0 < walked[0] <= budgets[0] + 1 < flow.MAX_INSTANCES
