"""A model that says it has no structured output (its `capabilities`) is told an `output`'s schema, on every wire.

Such a model (many self-hosted ones) would reject a native structured-output
field or ignore it. What the provider receives: no native field, the schema in
the system message (or its wire's equivalent); an Anthropic model that can call
tools answers through a forced tool instead. The reply is validated as for any
model, and a fallback is asked its own way.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import plait
from plait.runtime.providers.fake.server import FAKE_KEY_ENV, FakeServer

from conftest import FLAVOURS

_PROVIDER = {"openai-responses": "openai"}
ANSWER = {"output": {"category": "billing"}}
SCHEMA_WORDS = '"category"'


def _model(server: FakeServer, flavour: str, name: str, model_id: str, capabilities: str | None) -> str:
    provider = _PROVIDER.get(flavour, flavour)
    lines = [f'base_url = "{server.base_url(provider)}"', f'api_key = env("{FAKE_KEY_ENV}")', "retries = 0"]
    if flavour == "openai-responses":
        lines.append('api = "responses"')
    if capabilities is not None:
        lines.append(f"capabilities = [{capabilities}]")
    return f'model {name} = "{provider}/{model_id}" {{\n  ' + "\n  ".join(lines) + "\n}\n"


STEP = 'step classify {\n  model = m\n  prompt = "Sort: {{input}}"\n  output { category: "billing" | "tech" }\n}\n'


def _run(text: str) -> Any:
    compiled = plait.compile(text)
    assert not compiled.errors, "\n".join(str(d) for d in compiled.errors)

    async def go() -> Any:
        run = plait.arun(text, "my invoice is wrong")
        try:
            return await run
        finally:
            await run.engine.aclose()

    return asyncio.run(go())


def _native(flavour: str, body: dict[str, Any]) -> bool:
    """Whether the body asks for structured output the wire's own way."""
    if flavour == "google":
        return "responseJsonSchema" in body.get("generationConfig", {})
    return bool({"response_format", "text", "output_config"} & set(body))


def _system(flavour: str, body: dict[str, Any]) -> str:
    if flavour == "google":
        return " ".join(p["text"] for p in body.get("systemInstruction", {}).get("parts", []))
    if flavour == "anthropic":
        return str(body.get("system", ""))
    if flavour == "openai-responses":
        return str(body.get("instructions", ""))
    return " ".join(m["content"] for m in body["messages"] if m["role"] == "system")


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_a_model_without_structured_output_is_told_the_schema_and_its_reply_validated(
    plait_fake_server, flavour: str
) -> None:
    plait_fake_server.push(ANSWER)
    result = _run("plait 0.3\n" + _model(plait_fake_server, flavour, "m", "fake-model", "streaming") + STEP)
    assert result.stop_reason == "done" and result.output == {"category": "billing"}
    body = plait_fake_server.requests[-1].body
    assert not _native(flavour, body), body
    assert SCHEMA_WORDS in _system(flavour, body) and '"billing"' in _system(flavour, body)


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_a_model_whose_entry_says_nothing_is_asked_natively(plait_fake_server, flavour: str) -> None:
    plait_fake_server.push(ANSWER)
    _run("plait 0.3\n" + _model(plait_fake_server, flavour, "m", "fake-model", None) + STEP)
    assert _native(flavour, plait_fake_server.requests[-1].body)


def test_a_told_reply_that_misses_the_schema_fails_naming_it(plait_fake_server) -> None:
    plait_fake_server.push({"text": "It is about billing."})
    result = _run("plait 0.3\n" + _model(plait_fake_server, "openai-compatible", "m", "fake-model", "streaming") + STEP)
    assert result.stop_reason == "error" and result.error is not None and result.error.kind == "output_invalid"


def test_an_anthropic_model_with_tools_but_no_structured_output_answers_through_a_forced_tool(
    plait_fake_server,
) -> None:
    plait_fake_server.push(ANSWER)
    # A current id the wire would ask natively: the entry is what says it cannot.
    model = _model(plait_fake_server, "anthropic", "m", "claude-sonnet-4-5", "streaming, tools")
    result = _run("plait 0.3\n" + model + STEP)
    assert result.output == {"category": "billing"}
    body = plait_fake_server.requests[-1].body
    assert "output_config" not in body and body["tool_choice"] == {"type": "tool", "name": "final_answer"}
    assert SCHEMA_WORDS not in str(body.get("system", ""))


def test_each_model_a_call_falls_back_to_is_asked_its_own_way(plait_fake_server) -> None:
    """The primary is told the schema; its fallback, whose entry says nothing, is asked natively."""
    plait_fake_server.push({"error": {"kind": "server_error"}}, key="told")
    plait_fake_server.push(ANSWER, key="native")
    text = (
        "plait 0.3\n"
        + _model(plait_fake_server, "openai", "m", "told", "streaming")
        + _model(plait_fake_server, "openai", "backup", "native", None)
        + 'agent classify {\n  model = m\n  fallback = [backup]\n  output { category: "billing" | "tech" }\n}\n'
    )
    result = _run(text)
    assert result.output == {"category": "billing"}
    told, native = (
        next(r.body for r in plait_fake_server.requests if r.body["model"] == m) for m in ("told", "native")
    )
    assert "response_format" not in told and SCHEMA_WORDS in told["messages"][0]["content"]
    assert told["messages"][0]["role"] == "system"
    assert native["response_format"]["type"] == "json_schema"
    assert all(m["role"] != "system" for m in native["messages"])
