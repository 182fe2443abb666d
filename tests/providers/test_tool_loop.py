"""The full tool loop (call → tool result → answer) over real loopback HTTP, for every provider, streamed and not."""

from __future__ import annotations

import asyncio

import pytest

from plait.runtime.providers import make_provider
from plait.runtime.providers.base import Message, TextDelta, TextPart, ToolCallDelta, ToolCallStart

from conftest import FLAVOURS
from helpers import call, request


def tool_result_in_request(flavour: str, body: dict, call_id: str) -> object:
    """Where each provider expects the tool's answer, in its own shape."""
    if flavour in ("openai", "openai-compatible"):
        return next(m for m in body["messages"] if m["role"] == "tool" and m["tool_call_id"] == call_id)["content"]
    if flavour == "openai-responses":
        return next(i for i in body["input"] if i.get("type") == "function_call_output" and i["call_id"] == call_id)[
            "output"
        ]
    if flavour == "anthropic":
        user = body["messages"][-1]
        assert user["role"] == "user"
        return next(b for b in user["content"] if b["type"] == "tool_result" and b["tool_use_id"] == call_id)["content"]
    turn = body["contents"][-1]
    assert turn["role"] == "user"
    return next(p["functionResponse"] for p in turn["parts"] if "functionResponse" in p)["response"]["output"]


@pytest.mark.parametrize("stream", [False, True], ids=["buffered", "streamed"])
@pytest.mark.parametrize("flavour", FLAVOURS)
def test_tool_loop(plait_fake_server, flavour: str, stream: bool) -> None:
    server = plait_fake_server
    server.push(
        {"text": "Let me add.", "tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]},
        {"text": "2 + 3 is 5."},
    )

    async def loop():
        provider = make_provider(server.config(flavour))
        messages = [Message.user("What is 2 + 3?")]
        first, events = await call(provider, request(messages, system="Use the tool.", step=1), stream)
        messages.append(first.message)
        for c in first.tool_calls:
            result = str(c.arguments["a"] + c.arguments["b"])
            messages.append(Message("tool", [TextPart(result)], tool_call_id=c.id, name=c.name))
        second, _ = await call(provider, request(messages, system="Use the tool.", step=2), stream)
        await provider.aclose()
        return first, events, second

    first, events, second = asyncio.run(loop())
    assert first.finish_reason == "tool_calls"
    assert first.text == "Let me add."
    [tool_call] = first.tool_calls
    assert (tool_call.name, tool_call.arguments, tool_call.malformed) == ("add", {"a": 2, "b": 3}, False)
    assert second.finish_reason == "stop" and second.text == "2 + 3 is 5." and not second.tool_calls
    assert second.usage.input_tokens > 0

    assert tool_result_in_request(flavour, server.requests[-1].body, tool_call.id) == "5"
    if stream:
        assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Let me add."
        starts = [e for e in events if isinstance(e, ToolCallStart)]
        assert [(s.call_id, s.arguments, s.step) for s in starts] == [(tool_call.id, {"a": 2, "b": 3}, 1)]
        deltas = [e for e in events if isinstance(e, ToolCallDelta)]
        if flavour == "google":
            assert deltas == []  # Gemini sends calls whole
        else:
            assert len(deltas) > 1 and {d.call_id for d in deltas} == {tool_call.id}
            assert "".join(d.arguments for d in deltas) == tool_call.raw_arguments
            assert events.index(starts[0]) > events.index(deltas[-1])


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_system_prompt_and_tools_reach_the_wire(plait_fake_server, flavour: str) -> None:
    plait_fake_server.push({"text": "ok"})

    async def go():
        provider = make_provider(plait_fake_server.config(flavour, temperature=0.2, max_tokens=64))
        await provider.complete(request(system="Be brief.", tool_choice="add"))
        await provider.aclose()

    asyncio.run(go())
    body = plait_fake_server.requests[-1].body
    text = str(body)
    assert "Be brief." in text and "Add two integers." in text
    if flavour in ("openai", "openai-compatible"):
        assert body["tool_choice"] == {"type": "function", "function": {"name": "add"}}
        assert body["max_tokens"] == 64 and body["temperature"] == 0.2
    elif flavour == "openai-responses":
        assert body["tool_choice"] == {"type": "function", "name": "add"} and body["instructions"] == "Be brief."
        assert body["max_output_tokens"] == 64
    elif flavour == "anthropic":
        assert body["tool_choice"] == {"type": "tool", "name": "add"} and body["system"] == "Be brief."
        assert body["max_tokens"] == 64
    else:
        assert body["toolConfig"] == {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["add"]}}
        assert body["generationConfig"] == {"temperature": 0.2, "maxOutputTokens": 64}


# Anthropic's buffered `input` is always a JSON object; only its stream can be cut short.
MALFORMABLE = [
    (flavour, stream)
    for flavour in ("openai", "openai-responses", "openai-compatible", "anthropic")
    for stream in (False, True)
    if stream or flavour != "anthropic"
]


@pytest.mark.parametrize(("flavour", "stream"), MALFORMABLE)
def test_malformed_arguments_are_marked_never_empty(plait_fake_server, flavour: str, stream: bool) -> None:
    plait_fake_server.push({"tool_calls": [{"name": "add", "raw_arguments": '{"a": 2, "b'}]})

    async def go():
        provider = make_provider(plait_fake_server.config(flavour))
        response, events = await call(provider, request(), stream)
        await provider.aclose()
        return response, events

    response, events = asyncio.run(go())
    [bad] = response.tool_calls
    assert bad.malformed and bad.arguments is None and bad.raw_arguments == '{"a": 2, "b'
    assert response.finish_reason == "malformed_tool_call"
    if stream:
        assert [e.arguments for e in events if isinstance(e, ToolCallStart)] == [None]


def test_gemini_malformed_function_call_finish(plait_fake_server) -> None:
    plait_fake_server.push(
        {"text": "", "finish_reason": "malformed_tool_call"}, {"finish_reason": "TOO_MANY_TOOL_CALLS"}
    )

    async def go():
        provider = make_provider(plait_fake_server.config("google"))
        first, _ = await call(provider, request(), False)
        second, _ = await call(provider, request(), True)
        await provider.aclose()
        return first, second

    first, second = asyncio.run(go())
    assert (first.finish_reason, first.raw_finish_reason) == ("malformed_tool_call", "MALFORMED_FUNCTION_CALL")
    assert (second.finish_reason, second.raw_finish_reason) == ("too_many_tool_calls", "TOO_MANY_TOOL_CALLS")


def test_gemini_replays_thought_signature_and_omits_invented_ids(plait_fake_server) -> None:
    plait_fake_server.push({"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 1}}]}, {"text": "2"})

    async def go():
        provider = make_provider(plait_fake_server.config("google"))
        messages = [Message.user("1+1?")]
        first, _ = await call(provider, request(messages), False)
        c = first.tool_calls[0]
        c.id = "plait_invented"  # as for a Gemini 2.5 call that came without an id
        messages += [first.message, Message("tool", [TextPart("2")], tool_call_id=c.id, name="add")]
        await call(provider, request(messages), False)
        await provider.aclose()

    asyncio.run(go())
    model_turn, user_turn = plait_fake_server.requests[-1].body["contents"][1:]
    assert model_turn["parts"][0]["thoughtSignature"] == "ZmFrZS1zaWduYXR1cmU="
    assert "id" not in model_turn["parts"][0]["functionCall"]
    assert user_turn["parts"][0]["functionResponse"] == {"name": "add", "response": {"output": "2"}}


def test_responses_phase_is_carried_on_parts_and_deltas(plait_fake_server) -> None:
    plait_fake_server.push(
        {"text": "Looking it up", "phase": "commentary"}, {"text": "Looking it up", "phase": "commentary"}
    )

    async def go():
        provider = make_provider(plait_fake_server.config("openai-responses"))
        buffered, _ = await call(provider, request(), False)
        streamed, events = await call(provider, request(), True)
        await provider.aclose()
        return buffered, streamed, events

    buffered, streamed, events = asyncio.run(go())
    assert [p.phase for p in buffered.message.content] == ["commentary"]
    assert [p.phase for p in streamed.message.content] == ["commentary"]
    assert {e.phase for e in events if isinstance(e, TextDelta)} == {"commentary"}


def test_one_shared_client_serves_many_concurrent_calls(plait_fake_server) -> None:
    from plait.runtime.providers.transport import make_client

    plait_fake_server.push(*[{"text": f"answer {i}", "delay": "20ms"} for i in range(100)])

    async def go():
        client = make_client()
        providers = [make_provider(plait_fake_server.config(f), client=client) for f in FLAVOURS]
        results = await asyncio.gather(*[providers[i % 5].complete(request()) for i in range(100)])
        await client.aclose()
        return results

    results = asyncio.run(go())
    assert sorted(r.text for r in results) == sorted(f"answer {i}" for i in range(100))


def test_a_provider_survives_successive_event_loops(plait_fake_server) -> None:
    """`plait chat` and `plait.run` call asyncio.run per turn; the provider object outlives each loop."""
    plait_fake_server.push({"text": "first"}, {"text": "second"})
    provider = make_provider(plait_fake_server.config("anthropic"))
    assert asyncio.run(provider.complete(request())).text == "first"
    assert asyncio.run(provider.complete(request())).text == "second"
    # Closed from a third loop: both sessions' sockets are released (the suite turns leaks into errors).
    asyncio.run(provider.aclose())
