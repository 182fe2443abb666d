"""Templates wherever LANGUAGE.md allows them: agent and step `system`, step `prompt`,
a consolidate's `task`, and an http tool's URL, headers and body (parameters and state)."""

from __future__ import annotations

import json

from plait.core.kinds import ToolNode
from plait.core.kinds import AgentNode
from plait.core.kinds import StepNode
from plait.core.kinds import ChainNode, ConsolidateNode, ParallelNode
from plait.runtime.templates import render
from plait.runtime.tools import ToolResult
from runtime_helpers import call, fn_tool, go, make
from test_runtime_compose import program
from test_runtime_tools import server  # noqa: F401  (the loopback HTTP fixture)


def set_state(**values):
    return fn_tool("remember", lambda: ToolResult("noted", state=values))


def test_escaped_braces_stay_literal_and_paths_resolve():
    assert render(r"\{{input}} is {{input}}", input="x") == "{{input}} is x"
    assert render("{{input.a}}/{{state.k}}", input='{"a": 1}', state={"k": "v"}) == "1/v"


def test_agent_system_reads_its_input_and_state_at_every_request():
    engine = make(
        [call("remember"), {"text": "ok"}],
        tools={"remember": set_state(tone="dry")},
        system=r"Topic: {{input}}. Tone: {{state.tone}}. Literal \{{x}}.",
    )
    go(engine.run("tides"))
    systems = [r["system"] for r in engine.providers["m"].requests]
    assert systems == ["Topic: tides. Tone: {{state.tone}}. Literal {{x}}.", "Topic: tides. Tone: dry. Literal {{x}}."]


def test_agent_system_reads_a_parallel_branch_of_its_input():
    p = program(
        chains=[ChainNode(name="main", elements=("both", "writer"))],
        parallels=[ParallelNode(name="both", branches=("a", "b"))],
        steps=[StepNode(name="a", model="m"), StepNode(name="b", model="m")],
    )
    p.agents["writer"] = AgentNode(name="writer", model="m", system="A said {{input.a}}; B said {{input.b}}.")
    engine = make(
        models={"m": {"a": [{"text": "x"}], "b": [{"text": "y"}], "writer": [{"text": "done"}]}}, agents={}, program=p
    )
    assert go(engine.run("go")).output == "done"
    assert engine.providers["m"].requests[-1]["system"] == "A said x; B said y."


def test_step_system_and_prompt_read_state_and_input():
    p = program(
        chains=[ChainNode(name="main", elements=("setter", "write"))],
        steps=[
            StepNode(
                name="write",
                model="m",
                prompt=r"Write on {{state.topic}} from {{input}} \{{not a path}}",
                system="Audience: {{state.audience}}; given {{input}}",
            )
        ],
    )
    p.agents["setter"] = AgentNode(name="setter", model="m", tools=("remember",))
    engine = make(
        models={"m": {"setter": [call("remember"), {"text": "notes"}], "write": [{"text": "essay"}]}},
        tools={"remember": set_state(topic="tides", audience="kids")},
        agents={},
        program=p,
    )
    assert go(engine.run("go")).output == "essay"
    last = engine.providers["m"].requests[-1]
    assert last["messages"][0].text == "Write on tides from notes {{not a path}}"
    assert last["system"] == "Audience: kids; given notes"


def test_consolidate_task_reads_state_and_input():
    p = program(
        chains=[ChainNode(name="main", elements=("setter", "panel"))],
        consolidates=[
            ConsolidateNode(
                name="panel", agents=("a", "b"), judge="judge", rounds=1, task="{{state.q}} about {{input}}"
            )
        ],
    )
    p.agents.update(
        {
            "setter": AgentNode(name="setter", model="m", tools=("remember",)),
            "a": AgentNode(name="a", model="m"),
            "b": AgentNode(name="b", model="m"),
            "judge": AgentNode(name="judge", model="m"),
        }
    )
    engine = make(
        models={
            "m": {
                "setter": [call("remember"), {"text": "moons"}],
                "a": [{"text": "1"}],
                "b": [{"text": "2"}],
                "judge": [{"text": '{"agreed": true, "summary": "both"}'}],
            }
        },
        tools={"remember": set_state(q="Ask")},
        agents={},
        program=p,
    )
    go(engine.run("go"))
    firsts = {r["agent"]: r["messages"][0].text for r in engine.providers["m"].requests if r["agent"] in ("a", "b")}
    assert firsts == {"a": "Ask about moons", "b": "Ask about moons"}


def test_http_tool_url_headers_and_body_read_state(server):  # noqa: F811
    lookup = ToolNode(
        name="lookup",
        description="",
        parameters={"type": "object", "properties": {"q": {"type": "string"}}},
        run={
            "type": "http",
            "allow_private": True,
            "method": "GET",
            "url": server + "/s?q={{q}}&t={{state.tenant}}",
            "headers": {"x-key": "{{state.tenant}}-{{q}}"},
        },
    )
    file = ToolNode(
        name="file",
        description="",
        parameters={"type": "object", "properties": {"n": {"type": "integer"}}},
        run={
            "type": "http",
            "allow_private": True,
            "method": "POST",
            "url": server + "/file",
            "body": '{"tenant": "{{state.tenant}}", "n": {{n}}}',
        },
    )
    engine = make(
        [call("remember"), call("lookup", q="a&b"), call("file", n=2), {"text": "ok"}],
        tools={"remember": set_state(tenant='acme & "co"'), "lookup": lookup, "file": file},
    )

    async def scenario():
        try:
            return await engine.run("go")
        finally:
            await engine.aclose()

    go(scenario())
    results = [m.text for m in engine.providers["m"].requests[-1]["messages"] if m.role == "tool"]
    got, posted = (json.loads(text) for text in results[1:])
    assert got == {"path": "/s?q=a%26b&t=acme%20%26%20%22co%22", "key": 'acme & "co"-a&b'}
    assert posted == {"body": {"tenant": 'acme & "co"', "n": 2}}
