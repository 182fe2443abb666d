"""Fallback models, the stateful agent, streaming, observers, telemetry, snapshots, layers, collisions."""

from __future__ import annotations

import json

import pytest

from plait.core.kinds import AgentNode
from plait.runtime.errors import ToolNameCollision
from plait.runtime.providers.base import ProviderError
from runtime_helpers import call, drain, fn_tool, go, make, schema


def two_models(primary, backup, **kw):
    return make(
        models={"p": primary, "b": backup}, agents={"main": AgentNode(name="main", model="p", fallback=("b",), **kw)}
    )


def test_fallback_serves_the_step_warns_and_names_the_serving_model():
    engine = two_models([{"error": {"kind": "rate_limit"}}], [{"text": "from backup"}])
    run = engine.start("go")
    result = go(run)
    assert result.output == "from backup"
    [warning] = result.report.warnings
    assert warning["code"] == "model_fallback" and warning["details"] == {"from": "p", "to": "b", "kind": "rate_limit"}
    assert run.ctx.runs["main"].messages[-1].model == "b" and result.report.steps[0]["model"] == "b"


def test_every_step_starts_from_the_primary_again():
    engine = two_models([{"error": {"kind": "server_error"}}, {"text": "primary again"}], [call("t")], tools=("t",))
    engine.program.tools["t"] = fn_tool("t", lambda: "r")
    result = go(engine.run("go"))
    assert result.output == "primary again" and [s["model"] for s in result.report.steps] == ["b", "p"]


def test_non_fallback_kinds_propagate_immediately():
    engine = two_models([{"error": {"kind": "auth"}}], [{"text": "unused"}])
    result = go(engine.run("go"))
    assert result.error.kind == "auth" and engine.providers["b"].requests == []


def test_fallback_on_overrides_the_set_and_last_error_is_raised():
    engine = two_models(
        [{"error": {"kind": "auth", "message": "p says no"}}],
        [{"error": {"kind": "auth", "message": "b says no"}}],
        fallback_on=("auth",),
    )
    result = go(engine.run("go"))
    assert result.error.message == "b says no"


def test_timeout_falls_over_to_backup():
    engine = make(
        models={"p": [{"text": "slow", "delay": "300ms"}], "b": [{"text": "fast"}]},
        agents={"main": AgentNode(name="main", model="p", fallback=("b",))},
        model_options={"p": {"timeout": 0.05}},
    )
    result = go(engine.run("go"))
    assert result.output == "fast" and result.report.warnings[0]["details"]["kind"] == "timeout"


def test_streamed_step_cannot_fall_over_after_its_first_event():
    engine = two_models(
        [{"text": "half an answer", "error": {"kind": "server_error", "after": 1}}], [{"text": "backup"}]
    )
    run = engine.start("go")

    events = go(drain(run))
    assert run.result.error.kind == "server_error" and engine.providers["b"].requests == []
    assert [e.data["text"] for e in events if e.type == "text"] == ["half "]
    # Failing before the first event still falls over.
    engine = two_models([{"error": {"kind": "server_error"}}], [{"text": "backup"}])
    run = engine.start("go")
    go(drain(run))
    assert run.result.output == "backup"


def test_stateful_agent_keeps_history_across_turns():
    engine = make([{"text": "hi Ann"}, {"text": "your name is Ann"}])
    agent = engine.agent("main")
    assert go(agent.complete("I am Ann")).output == "hi Ann"
    assert go(agent.complete("who am I?")).output == "your name is Ann"
    sent = engine.providers["m"].requests[1]["messages"]
    assert [(m.role, m.text) for m in sent] == [("user", "I am Ann"), ("assistant", "hi Ann"), ("user", "who am I?")]
    assert agent.last_report.model_calls == 1


def test_agent_complete_raises_provider_errors_with_report_attached():
    engine = make([{"error": {"kind": "rate_limit"}}])
    agent = engine.agent("main")
    with pytest.raises(ProviderError) as info:
        go(agent.complete("x"))
    assert info.value.kind == "rate_limit" and info.value.report["stop_reason"] == "error"


def test_stream_forwards_text_deltas_tool_call_deltas_and_starts():
    engine = make(
        [
            {"tool_calls": [{"name": "add", "arguments": {"a": 12, "b": 30}}]},
            {"text": "it is 42", "phase": "final_answer"},
        ],
        tools={"add": fn_tool("add", lambda a, b: a + b, schema(a="integer", b="integer"))},
    )
    agent = engine.agent("main")

    events = go(drain(agent.stream("add")))
    deltas = [e for e in events if e.type == "tool_call_delta"]
    start = next(e for e in events if e.type == "tool_call_start")
    assert len(deltas) >= 2 and "".join(d.data["arguments"] for d in deltas) == json.dumps({"a": 12, "b": 30})
    assert {d.data["call_id"] for d in deltas} == {start.data["call_id"]} and deltas[0].data["step"] == 1
    assert start.data["arguments"] == {"a": 12, "b": 30}
    assert "".join(e.data["text"] for e in events if e.type == "text") == "it is 42"
    assert [e.data["phase"] for e in events if e.type == "text"][0] == "final_answer"
    assert events[-1].type == "run_end" and events[-1].data["output"] == "it is 42"


def test_layered_system_prompt_is_rebuilt_for_every_request():
    facts = iter(["fact one", "fact two"])
    engine = make([call("t"), {"text": "ok"}], tools={"t": fn_tool("t", lambda: "r")}, system="You are terse.")
    agent = engine.agent("main")
    agent.context.set("facts", lambda: next(facts))
    go(agent.complete("go"))
    systems = [r["system"] for r in engine.providers["m"].requests]
    assert systems == ["You are terse.\n\nfact one", "You are terse.\n\nfact two"]


def test_runtime_tool_name_collision_warns_or_errors():
    engine = make([{"text": "x"}], tools={"add": fn_tool("add", lambda: 1)})
    agent = engine.agent("main")
    agent.add_tool(lambda: 2, name="add")
    assert [w["code"] for w in agent.ctx.report.warnings] == ["tool_name_collision"]
    assert agent._run.toolset.tools["add"].fn() == 2
    with pytest.raises(ToolNameCollision):
        agent.add_tool(lambda: 3, name="add", policy="error")


def test_function_and_agent_observers():
    seen = []
    engine = make(
        models={"m": {"main": [call("t"), {"text": "done"}], "watcher": [{"text": "noted"}]}},
        tools={"t": fn_tool("t", lambda: "r")},
        agents={
            "main": AgentNode(name="main", model="m", tools=("t",)),
            "watcher": AgentNode(name="watcher", model="m"),
        },
    )
    engine.observe("tool_call_end", lambda e: seen.append(e.data["name"]))
    engine.observe("tool_call_end", "watcher")
    result = go(engine.run("go"))
    assert seen == ["t"] and result.output == "done"
    watched = engine.providers["m"].requests[-1]
    assert watched["agent"] == "watcher" and json.loads(watched["messages"][0].text)["type"] == "tool_call_end"


def test_events_carry_telemetry_names_and_paths():
    engine = make([{"text": "x"}], label="briefing", source="customer", attributes={"app.tenant": "acme"})
    run = engine.start("go")

    events = go(drain(run))
    end = next(e for e in events if e.type == "agent_end")
    assert (end.label, end.source, end.attributes, end.span) == (
        "briefing",
        "customer",
        {"app.tenant": "acme"},
        "invoke_agent briefing",
    )
    assert end.to_dict()["path"] == ["main"] and events[0].type == "run_start" and events[-1].type == "run_end"


def test_agent_snapshot_restores_and_continues_identically():
    script = [{"text": "one"}, call("t"), {"text": "three"}]
    tools = {"t": fn_tool("t", lambda: "r")}
    original = make(list(script), tools=tools)
    agent = original.agent("main")
    go(agent.complete("first"))
    snap = json.loads(json.dumps(agent.snapshot()))
    expected = go(agent.complete("second"))

    restored_engine = make(list(script), tools=tools)
    restored = type(agent).restore(snap, restored_engine.new_context())
    again = go(restored.complete("second"))
    assert again.output == expected.output == "three"
    assert [(m.role, m.text) for m in restored.history] == [(m.role, m.text) for m in agent.history]


def test_run_snapshot_at_interrupt_restores_and_resumes_identically():
    tool = fn_tool("send", lambda to: f"sent {to}", schema(to="string"), approval=True)
    script = [call("send", to="a"), {"text": "finished"}]
    engine = make(list(script), tools={"send": tool})
    run = engine.start("go")
    pid = go(run).pending[0].id
    snap = json.loads(json.dumps(run.snapshot()))
    direct = go(run.resume({pid: "approve"}))

    fresh = make(list(script), tools={"send": tool})
    restored = fresh.restore(snap)
    again = go(restored.resume({pid: "approve"}))
    assert (again.stop_reason, again.output) == (direct.stop_reason, direct.output) == ("done", "finished")
    assert again.report.tool_calls == direct.report.tool_calls


def test_system_prompt_templates_read_run_state_at_every_request():
    from plait.runtime.tools import ToolResult

    tool = fn_tool("topic", lambda: ToolResult("ok", state={"topic": "reactors"}))
    engine = make([call("topic"), {"text": "done"}], tools={"topic": tool}, system="You brief on {{state.topic}}.")
    go(engine.run("go"))
    assert [r["system"] for r in engine.providers["m"].requests] == [
        "You brief on {{state.topic}}.",
        "You brief on reactors.",
    ]


def test_server_state_is_only_offered_to_the_model_that_issued_it():
    engine = two_models(
        [{"response_id": "resp_1", "tool_calls": [{"name": "t", "arguments": {}}]}, {"error": {"kind": "rate_limit"}}],
        [{"text": "backup answer"}],
        tools=("t",),
    )
    engine.program.tools["t"] = fn_tool("t", lambda: "r")
    result = go(engine.run("go"))
    assert result.output == "backup answer"
    primary, backup = engine.providers["p"].requests, engine.providers["b"].requests
    assert primary[0]["previous_response_id"] is None and primary[1]["previous_response_id"] == "resp_1"
    assert backup[0]["previous_response_id"] is None


def test_an_observer_agent_watching_everything_does_not_watch_itself():
    engine = make(
        models={"m": {"main": [{"text": "done"}], "watcher": [{"text": "noted"}] * 20}},
        agents={"main": AgentNode(name="main", model="m"), "watcher": AgentNode(name="watcher", model="m")},
    )
    engine.observe("run_end", "watcher")
    engine.observe("*", lambda e: None)
    engine.observe("agent_end", "watcher")
    result = go(engine.run("go"))
    watched = [r for r in engine.providers["m"].requests if r["agent"] == "watcher"]
    # main's agent_end and the run's run_end: two reactions, none to the watcher's own events.
    assert result.output == "done" and len(watched) == 2


def test_a_history_snapshot_keeps_call_signatures_and_response_times():
    # A restored Gemini run must send its calls' thought signatures back, and a
    # restored Responses run needs created_at to continue from server state.
    from plait.runtime.history import from_json, to_json
    from plait.runtime.providers.base import Message, TextPart, ToolCall

    messages = [
        Message("user", [TextPart("go")]),
        Message(
            "assistant",
            [],
            [ToolCall("c1", "t", {"x": 1}, '{"x": 1}', signature="sig-abc")],
            model="m",
            response_id="resp_1",
            created_at=1764470000.5,
        ),
        Message("tool", [TextPart("r")], tool_call_id="c1", name="t"),
    ]
    restored = from_json(json.loads(json.dumps(to_json(messages))))
    assert restored == messages
    assert restored[1].tool_calls[0].signature == "sig-abc" and restored[1].created_at == 1764470000.5
