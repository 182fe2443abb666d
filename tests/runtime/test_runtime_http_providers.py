"""The agent loop over the real HTTP providers, against the fake provider server on loopback."""

from __future__ import annotations

import asyncio

import pytest

from plait.runtime.config import AgentConfig, Program, ToolConfig
from plait.runtime.engine import Engine
from plait.testing import plait_fake_server  # noqa: F401  (the fixture)


def add(a: int, b: int) -> int:
    return a + b


@pytest.mark.parametrize("provider", ["openai", "anthropic", "google", "openai-responses"])
@pytest.mark.parametrize("streamed", [False, True])
def test_tool_loop_over_the_wire(plait_fake_server, provider, streamed):  # noqa: F811
    plait_fake_server.push({"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]}, {"text": "it is 5"})
    program = Program(entry="main")
    program.models["m"] = plait_fake_server.config(provider, name="m")
    program.tools["add"] = ToolConfig("add", "Add.", {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                                                       "required": ["a", "b"]}, {"type": "function"}, fn=add)
    program.agents["main"] = AgentConfig("main", "m", tools=("add",))
    engine = Engine(program)

    async def scenario():
        try:
            run = engine.start("2+3?")
            events = [e.type async for e in run] if streamed else []
            return await run, events
        finally:
            await engine.aclose()

    result, events = asyncio.run(scenario())
    assert (result.stop_reason, result.output) == ("done", "it is 5")
    assert [(c["name"], c["arguments"], c["is_error"]) for c in result.report.tool_calls] == [("add", {"a": 2, "b": 3}, False)]
    assert result.report.model_calls == 2 and result.report.usage.input_tokens >= 0
    if streamed:
        assert "text" in events and "tool_call_start" in events
