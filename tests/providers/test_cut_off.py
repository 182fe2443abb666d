"""Replies a real model cuts off or shapes wrongly → what the run says about them (issue 26, items 1-4 and 6).

Against the loopback fake server: a reply stopped at max_tokens is never a
success when the runnable owed more (its `until` call, its typed `output`), says
which limit it hit, and is not retried as if malformed; a step gets the same
warning an agent does; a retry tells the model the schema; an openai-compatible
server is told it from the first request; an agent whose model never calls a
tool before breaking its `until` contract is warned that the server may drop tools.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from plait.runtime.function_tool import FunctionTool
from plait.core.kinds import AgentNode
from plait.runtime.program import Program
from plait.core.kinds import StepNode
from plait.core.types import TEXT, FieldType, ObjectType, to_json_schema
from plait.runtime.engine import Engine

#: A step declares a type; an agent (and the wire) carries its strict JSON Schema.
ANSWER = ObjectType((FieldType("answer", TEXT),))
SCHEMA = to_json_schema(ANSWER)
CUT = {"text": '{"answer": "a long answ', "finish_reason": "length"}


def _run(server: Any, flavour: str, *, agent: dict[str, Any] | None = None, step: dict[str, Any] | None = None) -> Any:
    program = Program(entry="main")
    program.models["m"] = server.config(flavour, name="m", retries=0)
    program.tools["submit"] = FunctionTool(
        name="submit", description="Hand the work in.", run={"type": "function"}, fn=lambda: "ok"
    )
    program.tools["look"] = FunctionTool(
        name="look", description="Look something up.", run={"type": "function"}, fn=lambda: "seen"
    )
    if step is not None:
        program.steps["main"] = StepNode(name="main", model="m", prompt="Say it: {{input}}", **step)
    else:
        program.agents["main"] = AgentNode(name="main", model="m", **(agent or {}))
    engine = Engine(program)

    async def go() -> Any:
        try:
            return await engine.run("go")
        finally:
            await engine.aclose()

    return asyncio.run(go())


def _codes(result: Any) -> list[str]:
    return [w["code"] for w in result.report.warnings]


@pytest.mark.parametrize("flavour", ["openai-compatible", "anthropic"])
def test_until_is_not_met_by_a_reply_cut_off_at_max_tokens(plait_fake_server, flavour: str) -> None:
    plait_fake_server.push({"text": "I will now call subm", "finish_reason": "length"})
    result = _run(plait_fake_server, flavour, agent={"tools": ("submit",), "until": ("submit",), "max_tokens": 4})
    assert result.stop_reason == "error" and result.error.kind == "until_tool_not_called"
    assert "cut off" in result.error.message and "max_tokens = 4" in result.error.message
    assert "response_truncated" in _codes(result)


def test_a_typed_step_cut_off_names_max_tokens_and_is_not_retried(plait_fake_server) -> None:
    plait_fake_server.push(CUT, CUT, CUT)
    result = _run(
        plait_fake_server, "openai-compatible", step={"output": ANSWER, "max_tokens": 5, "retry_malformed": 2}
    )
    assert result.stop_reason == "error" and result.error.kind == "output_invalid"
    message = result.error.message
    assert "cut off" in message and "max_tokens = 5" in message and "raise `max_tokens`" in message
    assert "not JSON" not in message and "retry_malformed" not in message
    assert len(plait_fake_server.requests) == 1
    assert "output_invalid_retried" not in _codes(result)


def test_a_typed_agent_cut_off_fails_naming_the_limit_instead_of_passing_on_text(plait_fake_server) -> None:
    plait_fake_server.push(CUT)
    result = _run(plait_fake_server, "openai", agent={"output": ANSWER, "max_tokens": 6, "retry_malformed": 2})
    assert result.stop_reason == "error" and result.error.kind == "output_invalid"
    assert "max_tokens = 6" in result.error.message
    assert len(plait_fake_server.requests) == 1  # not retried into the same limit


def test_a_step_cut_off_is_warned_about_naming_max_tokens(plait_fake_server) -> None:
    plait_fake_server.push({"text": "The first half of", "finish_reason": "length"})
    result = _run(plait_fake_server, "google", step={"max_tokens": 4})
    assert result.stop_reason == "done" and result.output == "The first half of"
    [warning] = result.report.warnings
    assert warning["code"] == "response_truncated" and "max_tokens = 4" in warning["message"]


def test_a_retry_tells_the_model_the_schema(plait_fake_server) -> None:
    plait_fake_server.push({"text": "Sure! The answer is yes."}, {"text": '{"answer": "yes"}'})
    result = _run(plait_fake_server, "openai", step={"output": ANSWER, "retry_malformed": 1})
    assert result.output == {"answer": "yes"}
    retry = plait_fake_server.requests[1].body["messages"][-1]["content"]
    assert json.dumps(SCHEMA, separators=(",", ":")) in retry


def test_an_agents_retry_tells_the_model_the_schema(plait_fake_server) -> None:
    plait_fake_server.push({"text": "Sure! The answer is yes."}, {"text": '{"answer": "yes"}'})
    result = _run(plait_fake_server, "openai", agent={"output": ANSWER, "retry_malformed": 1})
    assert result.output == {"answer": "yes"}
    retry = plait_fake_server.requests[1].body["messages"][-1]["content"]
    assert json.dumps(SCHEMA, separators=(",", ":")) in retry


def test_an_openai_compatible_server_is_told_the_schema_from_the_first_request(plait_fake_server) -> None:
    plait_fake_server.push({"text": '{"answer": "yes"}'}, {"text": '{"answer": "yes"}'})
    _run(plait_fake_server, "openai-compatible", step={"output": ANSWER, "system": "Be brief."})
    _run(plait_fake_server, "openai", step={"output": ANSWER, "system": "Be brief."})
    compatible, openai = (r.body["messages"][0] for r in plait_fake_server.requests)
    assert compatible["role"] == "system" and compatible["content"].startswith("Be brief.")
    assert '"answer"' in compatible["content"] and "JSON Schema" in compatible["content"]
    assert openai == {"role": "system", "content": "Be brief."}  # OpenAI enforces response_format itself


def test_an_agent_whose_model_never_calls_a_tool_is_warned_the_server_may_drop_tools(plait_fake_server) -> None:
    plait_fake_server.push({"text": "I have submitted it."})
    result = _run(plait_fake_server, "openai-compatible", agent={"tools": ("look", "submit"), "until": ("submit",)})
    assert result.error.kind == "until_tool_not_called"
    [warning] = result.report.warnings
    assert warning["code"] == "tools_never_called" and "--jinja" in warning["message"]
    assert warning["details"]["tools"] == ["look", "submit"]


def test_no_such_warning_when_the_model_called_another_tool(plait_fake_server) -> None:
    plait_fake_server.push({"tool_calls": [{"name": "look", "arguments": {}}]}, {"text": "done, without submitting"})
    result = _run(plait_fake_server, "openai-compatible", agent={"tools": ("look", "submit"), "until": ("submit",)})
    assert result.error.kind == "until_tool_not_called" and "tools_never_called" not in _codes(result)
