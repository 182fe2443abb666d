"""The agent loop over the real HTTP providers, against the fake provider server on loopback."""

from __future__ import annotations

import asyncio

import pytest

from plait.runtime.function_tool import FunctionTool
from plait.core.kinds import AgentNode
from plait.runtime.program import Program
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
    program.tools["add"] = FunctionTool(
        name="add",
        description="Add.",
        parameters={
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
        run={"type": "function"},
        fn=add,
    )
    program.agents["main"] = AgentNode(name="main", model="m", tools=("add",))
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
    assert [(c["name"], c["arguments"], c["is_error"]) for c in result.report.tool_calls] == [
        ("add", {"a": 2, "b": 3}, False)
    ]
    assert result.report.model_calls == 2 and result.report.usage.input_tokens >= 0
    # Both calls' token counts are read from the wire, buffered and streamed alike.
    assert result.report.usage.input_tokens > 0 and result.report.usage.output_tokens > 0
    if streamed:
        assert "text" in events and "tool_call_start" in events


def test_plait_run_and_plait_run_api_over_the_wire_release_their_connections(plait_fake_server, tmp_path, capsys):  # noqa: F811
    """The CLI and `plait.run` close every HTTP session they open (a leak is an error in this suite)."""
    import gc

    import plait
    from plait.cli import main

    plait_fake_server.push({"text": "from the CLI"}, {"text": "from the API"})
    spec = tmp_path / "wire.plait"
    spec.write_text(
        f'model m = "anthropic/claude" {{ base_url = "{plait_fake_server.base_url("anthropic")}", '
        'api_key = env("PLAIT_FAKE_API_KEY") }\nagent main { model = m }\n'
    )
    assert main(["run", str(spec), "--input", "hi"]) == 0
    assert capsys.readouterr().out == "from the CLI\n"
    assert plait.run(spec, "hi").output == "from the API"
    gc.collect()  # an unclosed session warns when collected: make that happen inside this test
