"""A declared `output` over loopback, for every provider: what each wire asks for, and what a run makes of the reply.

Each provider is asked natively (OpenAI Chat `response_format`, Responses
`text.format`, Anthropic `output_config.format` or a final-answer tool on older
models, Gemini `responseJsonSchema`); the runtime validates the answer, retries
a miss with `retry_malformed` (the guidance names the schema errors), then
fails the run with `output_invalid`.
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
from plait.core.types import TEXT, FieldType, LiteralType, ObjectType, to_json_schema
from plait.runtime.engine import Engine
from plait.runtime.providers import make_provider
from plait.runtime.providers.base import Message, TextDelta

from conftest import FLAVOURS
from helpers import call, request

#: A runnable declares a type; every wire carries its strict JSON Schema.
VERDICT_TYPE = ObjectType(
    (FieldType("verdict", LiteralType(("accept", "revise"))), FieldType("note", TEXT, optional=True))
)
VERDICT = to_json_schema(VERDICT_TYPE)


def asked_for(flavour: str, body: dict[str, Any], model: str = "fake-model") -> Any:
    """The schema as each wire carries it in the request body."""
    if flavour in ("openai", "openai-compatible"):
        fmt = body["response_format"]
        assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True and fmt["json_schema"]["name"]
        return fmt["json_schema"]["schema"]
    if flavour == "openai-responses":
        fmt = body["text"]["format"]
        assert fmt["type"] == "json_schema" and fmt["strict"] is True and fmt["name"]
        return fmt["schema"]
    if flavour == "anthropic":
        fmt = body["output_config"]["format"]
        assert fmt["type"] == "json_schema"
        return fmt["schema"]
    generation = body["generationConfig"]
    assert generation["responseMimeType"] == "application/json"
    return generation["responseJsonSchema"]


@pytest.mark.parametrize("stream", [False, True], ids=["buffered", "streamed"])
@pytest.mark.parametrize("flavour", FLAVOURS)
def test_each_wire_asks_for_the_schema_and_returns_the_json_answer(
    plait_fake_server, flavour: str, stream: bool
) -> None:
    plait_fake_server.push({"output": {"verdict": "accept", "note": None}})

    async def go():
        provider = make_provider(plait_fake_server.config(flavour))
        try:
            return await call(provider, request(tools=[], output_schema=VERDICT, agent="review"), stream)
        finally:
            await provider.aclose()

    response, events = asyncio.run(go())
    assert asked_for(flavour, plait_fake_server.requests[-1].body) == VERDICT
    assert json.loads(response.text) == {"verdict": "accept", "note": None} and response.finish_reason == "stop"
    if stream:  # streaming still streams: the JSON arrives as text deltas
        assert "".join(e.text for e in events if isinstance(e, TextDelta)) == response.text


def test_no_schema_no_structured_fields(plait_fake_server) -> None:
    for flavour in FLAVOURS:
        plait_fake_server.push({"text": "plain"})

        async def go(flavour=flavour):
            provider = make_provider(plait_fake_server.config(flavour))
            try:
                return await call(provider, request(tools=[]), False)
            finally:
                await provider.aclose()

        asyncio.run(go())
        body = plait_fake_server.requests[-1].body
        assert not {"response_format", "text", "output_config"} & set(body), flavour
        assert "responseJsonSchema" not in (body.get("generationConfig") or {}), flavour


@pytest.mark.parametrize("stream", [False, True], ids=["buffered", "streamed"])
def test_older_claude_models_answer_through_a_forced_final_tool(plait_fake_server, stream: bool) -> None:
    plait_fake_server.push({"output": {"verdict": "revise", "note": "tighten it"}})

    async def go():
        provider = make_provider(plait_fake_server.config("anthropic", "claude-3-5-haiku-20241022"))
        try:
            return await call(
                provider, request(tools=[], output_schema=VERDICT, model="claude-3-5-haiku-20241022"), stream
            )
        finally:
            await provider.aclose()

    response, events = asyncio.run(go())
    body = plait_fake_server.requests[-1].body
    assert "output_config" not in body
    assert body["tool_choice"] == {"type": "tool", "name": "final_answer"}
    assert body["tools"][-1]["name"] == "final_answer" and body["tools"][-1]["input_schema"] == VERDICT
    # The call of the answer tool is the answer: text, a plain stop, no tool call left to run.
    assert json.loads(response.text) == {"verdict": "revise", "note": "tighten it"}
    assert response.finish_reason == "stop" and response.tool_calls == []
    if stream:
        assert "".join(e.text for e in events if isinstance(e, TextDelta)) == response.text


def test_older_claude_models_with_tools_keep_them_callable() -> None:
    from plait.runtime.providers.anthropic import anthropic_body
    from helpers import ADD

    req = request(tools=[ADD], output_schema=VERDICT, model="claude-sonnet-4-20250514")
    body = anthropic_body(req, stream=False, temperature=None, max_tokens=None)
    assert body["tool_choice"] == {"type": "any"} and [t["name"] for t in body["tools"]] == ["add", "final_answer"]
    native = anthropic_body(
        request(tools=[ADD], output_schema=VERDICT, model="claude-sonnet-4-5"),
        stream=False,
        temperature=None,
        max_tokens=None,
    )
    assert "output_config" in native and [t["name"] for t in native["tools"]] == ["add"]


def test_gemini_2_with_tools_is_told_the_schema_and_gemini_3_is_asked() -> None:
    from plait.runtime.providers.google import google_body
    from helpers import ADD

    told = google_body(
        request(tools=[ADD], output_schema=VERDICT, model="gemini-2.5-flash"), temperature=None, max_tokens=None
    )
    assert "responseJsonSchema" not in told.get("generationConfig", {})
    assert '"verdict"' in told["systemInstruction"]["parts"][-1]["text"]
    asked = google_body(
        request(tools=[ADD], output_schema=VERDICT, model="gemini-3-pro-preview"), temperature=None, max_tokens=None
    )
    assert asked["generationConfig"]["responseJsonSchema"] == VERDICT


# --- through a run ---------------------------------------------------------------------


def engine(
    server: Any, flavour: str, *, retry_malformed: int = 0, step: bool = False, tools: bool = False, **config: Any
) -> Engine:
    program = Program(entry="review")
    program.models["m"] = server.config(flavour, name="m", **config)
    if step:
        program.steps["review"] = StepNode(
            name="review", model="m", prompt="Grade: {{input}}", output=VERDICT_TYPE, retry_malformed=retry_malformed
        )
    else:
        names: tuple[str, ...] = ()
        if tools:
            program.tools["lookup"] = FunctionTool(
                name="lookup",
                description="Look it up.",
                run={"type": "function"},
                fn=lambda: "the style guide says: short",
            )
            names = ("lookup",)
        program.agents["review"] = AgentNode(
            name="review", model="m", tools=names, output=VERDICT_TYPE, retry_malformed=retry_malformed
        )
    return Engine(program)


def run(eng: Engine) -> Any:
    async def go():
        try:
            return await eng.run("a draft")
        finally:
            await eng.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_a_valid_answer_is_the_runnables_record(plait_fake_server, flavour: str) -> None:
    plait_fake_server.push({"output": {"verdict": "accept", "note": None}})
    result = run(engine(plait_fake_server, flavour))
    assert result.stop_reason == "done" and result.output == {"verdict": "accept", "note": None}


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_an_invalid_answer_is_retried_with_the_schema_errors_then_accepted(plait_fake_server, flavour: str) -> None:
    plait_fake_server.push(
        {"output": {"verdict": "maybe", "note": None}}, {"output": {"verdict": "revise", "note": "shorter"}}
    )
    result = run(engine(plait_fake_server, flavour, retry_malformed=1))
    assert result.output == {"verdict": "revise", "note": "shorter"}
    assert [w["code"] for w in result.report.warnings] == ["output_invalid_retried"]
    retry = json.dumps(plait_fake_server.requests[-1].body)
    assert "does not match the required output schema" in retry and "verdict" in retry and "maybe" in retry


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_an_invalid_answer_without_retries_fails_the_run_with_output_invalid(plait_fake_server, flavour: str) -> None:
    plait_fake_server.push({"text": "I accept it."}, {"output": {"verdict": "accept"}})
    result = run(engine(plait_fake_server, flavour, retries=0))
    assert result.stop_reason == "error" and result.error.kind == "output_invalid"
    assert "not JSON" in result.error.message and "retry_malformed" in result.error.message
    assert len(plait_fake_server.requests) == 1


def test_the_retry_budget_spent_fails_with_output_invalid_naming_the_errors(plait_fake_server) -> None:
    plait_fake_server.push({"output": {"verdict": "maybe", "note": None}}, {"output": {"note": None}})
    result = run(engine(plait_fake_server, "openai", retry_malformed=1))
    assert result.error.kind == "output_invalid"
    assert "2 answers in a row" in result.error.message and "verdict" in result.error.message


@pytest.mark.parametrize("flavour", ["openai", "anthropic", "google"])
def test_a_step_with_output_retries_and_returns_the_record(plait_fake_server, flavour: str) -> None:
    plait_fake_server.push({"output": {"verdict": "ok"}}, {"output": {"verdict": "accept", "note": None}})
    result = run(engine(plait_fake_server, flavour, step=True, retry_malformed=1))
    assert result.output == {"verdict": "accept", "note": None}
    assert asked_for(flavour, plait_fake_server.requests[0].body) == VERDICT
    plait_fake_server.push({"output": {"verdict": "ok"}})
    failed = run(engine(plait_fake_server, flavour, step=True))
    assert failed.error.kind == "output_invalid" and "verdict" in failed.error.message


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_an_agent_with_tools_runs_its_tool_loop_and_only_the_final_answer_is_checked(
    plait_fake_server, flavour: str
) -> None:
    plait_fake_server.push(
        {"text": "Checking.", "tool_calls": [{"name": "lookup", "arguments": {}}]},
        {"output": {"verdict": "revise", "note": "short"}},
    )
    result = run(engine(plait_fake_server, flavour, tools=True))
    assert result.output == {"verdict": "revise", "note": "short"} and result.report.warnings == []
    assert len(result.report.tool_calls) == 1


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_a_streamed_run_streams_the_structured_answer(plait_fake_server, flavour: str) -> None:
    plait_fake_server.push({"output": {"verdict": "accept", "note": None}})
    eng = engine(plait_fake_server, flavour)
    texts: list[str] = []

    async def go():
        try:
            async for event in eng.start("a draft"):
                if event.type == "text":
                    texts.append(event.data["text"])
                if event.type == "run_end":
                    return event
        finally:
            await eng.aclose()

    end = asyncio.run(go())
    assert json.loads("".join(texts)) == {"verdict": "accept", "note": None}
    assert end.data["output"] == {"verdict": "accept", "note": None}


def test_scripted_output_replies_run_offline() -> None:
    from plait.runtime.providers.scripted import ScriptedProvider
    from plait.core.kinds import ModelNode

    program = Program(entry="review")
    program.models["m"] = ModelNode(name="m", provider="scripted", model_id="m")
    program.agents["review"] = AgentNode(name="review", model="m", output=VERDICT_TYPE, retry_malformed=1)
    provider = ScriptedProvider(
        program.models["m"],
        replies=[{"output": {"verdict": "nope", "note": None}}, {"output": {"verdict": "accept", "note": None}}],
    )
    result = asyncio.run(Engine(program, providers={"m": provider}).run("a draft"))
    assert result.output == {"verdict": "accept", "note": None}
    assert result.report.warnings[0]["code"] == "output_invalid_retried"
    assert "nope" in result.report.warnings[0]["message"] or "nope" in json.dumps(result.report.warnings[0])


def test_fenced_json_is_accepted_and_prose_is_not() -> None:
    from plait.runtime.structured_output import check_output

    value, errors = check_output('```json\n{"verdict": "accept", "note": null}\n```', VERDICT)
    assert (value, errors) == ({"verdict": "accept", "note": None}, [])
    value, errors = check_output("Sure! Here it is.", VERDICT)
    assert value is None and "not JSON" in errors[0]
    _, errors = check_output('{"verdict": "maybe", "note": null, "extra": 1}', VERDICT)
    assert any("verdict" in e for e in errors) and any("extra" in e for e in errors)


def test_message_used_for_the_history_is_the_answer_text() -> None:
    # A converted answer-tool call replays as the assistant's text, never as a tool call left unanswered.
    from plait.runtime.providers.anthropic import parse_anthropic

    req = request(tools=[], output_schema=VERDICT, model="claude-3-7-sonnet-20250219")
    data = {
        "content": [
            {"type": "tool_use", "id": "t1", "name": "final_answer", "input": {"verdict": "accept", "note": None}}
        ],
        "stop_reason": "tool_use",
        "usage": {},
    }
    response = parse_anthropic(data, req)
    assert isinstance(response.message, Message) and response.message.tool_calls == []
    assert json.loads(response.message.text)["verdict"] == "accept" and response.raw_finish_reason == "tool_use"
