"""Agent tools, hosted tools and hand-offs through the compiler's stages: the checks (P381-P383 and the option and
kind checks), graph JSON edges, the drawing, `plait diff` (a contract change) and `plait fmt`."""

from __future__ import annotations

from plait.compiler.diff import diff_graphs
from plait.compiler.pipeline import compile_spec
from plait.compiler.render.api import render
from plait.dsl.formatter import format_text

SPEC = """plait 0.3

model fast = "openai/gpt-4o-mini"
model claude = "anthropic/claude-sonnet-4-5"

agent flight_finder "Find flights." {
  model  = fast
  prompt = "Flights from {{input.origin}}"
  output { flights: list[string], note: string? }
}

tool find_flights "Find flights." {
  params { origin: string }
  run = delegate(flight_finder) { returns = output.flights }
}

tool web "Search the web." {
  run = hosted(web_search) { max_uses = 3, allowed_domains = ["example.com"] }
}

step billing { model = fast, prompt = "Billing: {{input}}" }

agent planner {
  model   = claude
  tools   = [find_flights, web]
  handoff = [billing]
}

step cite { model = fast, prompt = "{{input}} {{ len(web.citations) }}" }

chain main = planner -> cite
"""


def codes(text: str) -> list[str]:
    return [d.code for d in compile_spec(text, path="spec.plait").diagnostics]


def test_the_spec_checks_clean_and_its_graph_has_the_delegation_and_hand_off_edges():
    result = compile_spec(SPEC, path="spec.plait")
    assert [d.code for d in result.diagnostics] == []
    edges = result.graph.to_json()["edges"]
    delegates = [e for e in edges if e["kind"] == "delegates"]
    assert [(e["source"], e["target"], e["attrs"]) for e in delegates] == [
        ("planner", "flight_finder", {"tool": "find_flights"})
    ]
    handoffs = [e for e in edges if e["kind"] == "handoff"]
    assert [(e["source"], e["target"], e["attrs"]) for e in handoffs] == [("planner", "billing", {"index": 0})]
    assert '|"hand-off"| n_billing' in render(result.graph, "mermaid")


def test_a_hosted_tool_on_a_provider_that_does_not_run_it_is_p382_even_as_a_fallback():
    text = SPEC.replace("model   = claude", "model   = claude\n  fallback = [local]").replace(
        'model claude = "anthropic/claude-sonnet-4-5"',
        'model claude = "anthropic/claude-sonnet-4-5"\nmodel local = "openai-compatible/q" { base_url = "http://localhost:1/v1" }',
    )
    assert codes(text) == ["P382"]
    assert codes(
        SPEC.replace("hosted(web_search) {", "hosted(code_execution) {")
        .replace('max_uses = 3, allowed_domains = ["example.com"]', "")
        .replace(" {{ len(web.citations) }}", "")
    ) == ["P382"]


def test_a_hosted_kind_or_option_plait_does_not_know_is_reported_with_a_suggestion():
    found = compile_spec(SPEC.replace("hosted(web_search)", "hosted(web_serch)"), path="spec.plait").diagnostics
    assert "P204" in [d.code for d in found] and "did you mean `web_search`?" in str([d.fix for d in found])
    found = compile_spec(SPEC.replace("max_uses = 3", "max_use = 3"), path="spec.plait").diagnostics
    assert [d.code for d in found] == ["P201"] and found[0].fix is not None and found[0].fix.replacement == "max_uses"


def test_delegate_takes_an_agent():
    # flight_finder is then used by nothing (P601); billing is a step, not an agent.
    assert codes(SPEC.replace("delegate(flight_finder)", "delegate(billing)")) == ["P601", "P381"]


def test_changing_what_a_tool_returns_its_hosted_kind_or_a_hand_off_is_a_contract_change():
    old = compile_spec(SPEC, path="old.plait").graph
    for edited, field in (
        (SPEC.replace("returns = output.flights", "returns = output"), "run"),
        (SPEC.replace("max_uses = 3", "max_uses = 5"), "run"),
        (SPEC.replace("handoff = [billing]", "handoff = []"), "handoff"),
    ):
        new = compile_spec(edited, path="new.plait").graph
        changes = [c for c in diff_graphs(old, new) if c.what != "edge"]
        assert [(c.what, c.field) for c in changes] == [("contract", field)], changes


def test_fmt_keeps_delegate_hosted_and_handoff():
    text, problems = format_text(SPEC)
    assert problems == [] and text is not None
    assert "run = delegate(flight_finder) { returns = output.flights }" in text
    assert 'run = hosted(web_search) { max_uses = 3, allowed_domains = ["example.com"] }' in text
    assert "handoff = [billing]" in text
    assert format_text(text)[0] == text


PLACED = """plait 0.3
model m = "openai/gpt-4o-mini"
input { topic: string }
agent ff { model = m, prompt = "From {{input.origin}}" }
tool t "T." {
  params { origin: string }
  run = delegate(ff)
}
step prep { model = m, prompt = "{{input.topic}}", output { subject: string } }
step b { model = m, prompt = "B {{input.subject}}" }
agent a { model = m, tools = [t], handoff = [b] }
chain main = prep -> a
"""


def test_an_agent_behind_a_tool_receives_its_params_and_a_hand_off_target_the_agents_input():
    assert codes(PLACED) == []
    found = compile_spec(PLACED.replace("{{input.origin}}", "{{input.orign}}"), path="spec.plait").diagnostics
    assert [d.code for d in found] == ["P402"] and "origin" in str(found[0].notes)
    # b runs with what `a` received (prep's record), not the run's input.
    assert codes(PLACED.replace("B {{input.subject}}", "B {{input.topic}}")) == ["P402"]


def test_a_tool_named_like_a_hand_off_is_a_collision():
    text = SPEC.replace(
        'tool web "Search the web." {',
        'tool transfer_to_billing "Clash." { run = http(GET, "https://example.com") }\n\ntool web "Search the web." {',
    ).replace("tools   = [find_flights, web]", "tools   = [find_flights, web, transfer_to_billing]")
    found = compile_spec(text, path="spec.plait").diagnostics
    assert [d.code for d in found] == ["P306"] and "transfer_to_billing" in found[0].message


COSTED = """plait 0.3
model fast = "openai/gpt-4o-mini"
agent finder { model = fast, max_steps = 3, output { flights: list[string] } }
tool find "Find." {
  params { origin: string }
  run = delegate(finder) { returns = output.flights }
}
step billing { model = fast, prompt = "{{input}}" }
agent planner { model = fast, max_steps = 2, tools = [find], handoff = [billing] }
chain main = planner
"""


def test_the_cost_bound_counts_an_agent_tools_agent_and_the_costliest_hand_off_target():
    from plait.compiler.bounds import bound_entry

    rows = {row.name: row for row in bound_entry(compile_spec(COSTED, path="spec.plait").graph, "main").rows}
    assert "finder" in rows and "billing" in rows
    assert "unbounded × finder 3" in rows["planner"].formula and "max(billing) 1" in rows["planner"].formula
