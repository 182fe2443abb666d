"""Responses API server-state continuation: when `continuation_id` offers an id, and what is sent with it."""

from __future__ import annotations

import asyncio
import time

from plait.runtime.providers import make_provider
from plait.runtime.providers.base import Message, TextPart
from plait.runtime.providers.openai import continuation_id
from plait.runtime.providers.openai_responses import RETENTION

from helpers import call, request


def assistant(model: str = "gpt-x", response_id: str | None = "resp_1", age: float | None = 60.0) -> Message:
    created = None if age is None else time.time() - age
    return Message("assistant", [TextPart("hi")], model=model, response_id=response_id, created_at=created)


def test_continuation_id_offers_the_last_turns_id() -> None:
    messages = [Message.user("a"), assistant(), Message("tool", [TextPart("r")], tool_call_id="c")]
    assert continuation_id(messages, "gpt-x") == "resp_1"


def test_continuation_id_refuses_another_model_old_or_unknown_state() -> None:
    assert continuation_id([Message.user("a")], "gpt-x") is None
    assert continuation_id([assistant(model="claude-y")], "gpt-x") is None
    assert continuation_id([assistant(age=RETENTION + 1)], "gpt-x") is None
    assert continuation_id([assistant(age=None)], "gpt-x") is None
    assert continuation_id([assistant(response_id=None)], "gpt-x") is None
    # Only the LAST assistant turn counts: a fallback model's turn in between breaks the chain.
    assert continuation_id([assistant(), assistant(model="claude-y", response_id=None)], "gpt-x") is None


def test_tool_round_continues_by_id_over_the_wire(plait_fake_server) -> None:
    plait_fake_server.push({"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]}, {"text": "5"})

    async def go():
        provider = make_provider(plait_fake_server.config("openai-responses", model_id="gpt-x"))
        messages = [Message.user("2+3?")]
        first, _ = await call(provider, request(messages, system="Use tools.", model="gpt-x"), False)
        messages.append(first.message)
        messages.append(Message("tool", [TextPart("5")], tool_call_id=first.tool_calls[0].id, name="add"))
        previous = continuation_id(messages, "gpt-x")
        second, _ = await call(
            provider, request(messages, system="Use tools.", previous_response_id=previous, model="gpt-x"), True
        )
        await provider.aclose()
        return first, previous, second

    first, previous, second = asyncio.run(go())
    assert first.message.model == "gpt-x" and first.message.created_at and first.response_id == "resp_fake1"
    assert previous == "resp_fake1" and second.text == "5"
    body = plait_fake_server.requests[-1].body
    assert body["previous_response_id"] == "resp_fake1"
    assert body["input"] == [{"type": "function_call_output", "call_id": first.tool_calls[0].id, "output": "5"}]
    assert body["instructions"] == "Use tools." and body["tools"]  # neither is carried by the stored state


def test_unknown_previous_id_falls_back_to_the_full_history(plait_fake_server) -> None:
    plait_fake_server.push({"text": "ok"})

    async def go():
        provider = make_provider(plait_fake_server.config("openai-responses"))
        await call(provider, request([Message.user("a")], previous_response_id="resp_gone"), False)
        await provider.aclose()

    asyncio.run(go())
    body = plait_fake_server.requests[-1].body
    assert "previous_response_id" not in body and body["input"] == [{"role": "user", "content": "a"}]


def test_lost_server_state_is_retried_with_the_full_history(plait_fake_server) -> None:
    gone = {"error": {"kind": "invalid_request", "message": "Previous response with id 'resp_old' not found."}}
    plait_fake_server.push(gone, {"text": "recovered"}, gone, {"text": "recovered too"})
    messages = [Message.user("a"), assistant(response_id="resp_old"), Message.user("b")]

    async def go():
        provider = make_provider(plait_fake_server.config("openai-responses", retries=0))
        req = request(messages, previous_response_id="resp_old", model="gpt-x")
        buffered, _ = await call(provider, req, False)
        streamed, _ = await call(provider, req, True)
        await provider.aclose()
        return buffered, streamed

    buffered, streamed = asyncio.run(go())
    assert (buffered.text, streamed.text) == ("recovered", "recovered too")
    first, second = plait_fake_server.requests[0].body, plait_fake_server.requests[1].body
    assert first["previous_response_id"] == "resp_old" and len(first["input"]) == 1
    assert "previous_response_id" not in second and len(second["input"]) == 3


# --- the run asks the one gate (issue 9.9) -------------------------------------------


def _run_recording_continuations(provider: str, first_reply_age: float) -> list[str | None]:
    """A two-turn tool loop on a scripted model that stands for `provider`; the previous_response_id of each request."""
    from plait.core.kinds import ModelNode
    from plait.runtime.function_tool import FunctionTool
    from plait.core.kinds import AgentNode
    from plait.runtime.program import Program
    from plait.runtime.engine import Engine
    from plait.runtime.providers.scripted import ScriptedProvider

    seen: list[str | None] = []

    class Recording(ScriptedProvider):
        async def complete(self, request):
            seen.append(request.previous_response_id)
            return await super().complete(request)

    program = Program(entry="main")
    program.models["m"] = ModelNode(name="m", provider=provider, model_id="model-id")
    program.tools["t"] = FunctionTool(name="t", description="a tool", run={"type": "function"}, fn=lambda: "ok")
    program.agents["main"] = AgentNode(name="main", model="m", tools=("t",))
    replies = [
        {
            "response_id": "resp_1",
            "created_at": time.time() - first_reply_age,
            "tool_calls": [{"name": "t", "arguments": {}}],
        },
        {"text": "done"},
    ]
    engine = Engine(program, providers={"m": Recording(program.models["m"], replies=replies)})
    assert asyncio.run(engine.run("go")).output == "done"
    return seen


def test_a_run_continues_from_fresh_server_state() -> None:
    assert _run_recording_continuations("openai", 60.0) == [None, "resp_1"]


def test_a_run_sends_full_history_for_state_past_openais_retention() -> None:
    assert _run_recording_continuations("openai", RETENTION + 60.0) == [None, None]


def test_googles_retention_is_72_hours() -> None:
    from plait.runtime.providers.continuation import RETENTION as BY_PROVIDER

    assert BY_PROVIDER["google"] == 72 * 3600
    assert _run_recording_continuations("google", 71 * 3600) == [None, "resp_1"]
    assert _run_recording_continuations("google", 73 * 3600) == [None, None]


def test_providers_without_server_state_are_never_offered_an_id() -> None:
    assert _run_recording_continuations("anthropic", 60.0) == [None, None]
