"""`plait fake-server` as users' own apps meet it: driven by the official openai, anthropic and google-genai SDKs.

The server runs in-process on a loopback port (a thread); each SDK is pointed at
the base_url the server prints for its provider, with retries off so an error
reply surfaces as the SDK's own exception. The SDKs are in the `test` extra:
imported, not skipped, so a missing one fails here.
"""

from __future__ import annotations

import json
from typing import Any, Iterator

import anthropic
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types

from plait.runtime.providers.fake import FakeServer

ADD_OPENAI = {
    "type": "function",
    "function": {"name": "add", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}}},
}
ADD_RESPONSES = {
    "type": "function",
    "name": "add",
    "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}},
    "strict": False,
}
ADD_ANTHROPIC = {
    "name": "add",
    "description": "Add.",
    "input_schema": {"type": "object", "properties": {"a": {"type": "integer"}}},
}
CALL = {"tool_calls": [{"name": "add", "arguments": {"a": 2}}]}
VERDICT = {
    "type": "object",
    "properties": {"verdict": {"type": "string", "enum": ["accept", "revise"]}},
    "required": ["verdict"],
    "additionalProperties": False,
}


# Every client a test makes is closed when the test ends: a client left to the garbage
# collector closes its pooled socket whenever collection happens to run, which is inside
# some later test, where the ResourceWarning fails that test instead.
_clients: list[Any] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while _clients:
        _clients.pop().close()


def _held(client: Any) -> Any:
    _clients.append(client)
    return client


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as fake:
        yield fake


def oai(server: FakeServer, agent: str | None = None) -> Any:
    return _held(openai.OpenAI(base_url=server.base_url("openai", agent), api_key="any", max_retries=0))


def claude(server: FakeServer) -> Any:
    return _held(anthropic.Anthropic(base_url=server.base_url("anthropic"), api_key="any", max_retries=0))


def gemini(server: FakeServer, agent: str | None = None) -> Any:
    options = genai_types.HttpOptions(
        base_url=server.base_url("google", agent), retry_options=genai_types.HttpRetryOptions(attempts=1)
    )
    return _held(genai.Client(api_key="any", http_options=options))


# --- OpenAI Chat Completions -------------------------------------------------------


def test_openai_chat_buffered_streamed_and_tool_calls(server: FakeServer) -> None:
    server.push({"text": "hello there"}, {"text": "streamed words here"}, CALL)
    client = oai(server)
    reply = client.chat.completions.create(model="gpt-x", messages=[{"role": "user", "content": "hi"}])
    assert reply.choices[0].message.content == "hello there" and reply.choices[0].finish_reason == "stop"
    assert reply.choices[0].logprobs is None and reply.usage.total_tokens > 0
    chunks = list(
        client.chat.completions.create(model="gpt-x", messages=[{"role": "user", "content": "hi"}], stream=True)
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "streamed words here"
    called = client.chat.completions.create(
        model="gpt-x", messages=[{"role": "user", "content": "hi"}], tools=[ADD_OPENAI]
    )
    call = called.choices[0].message.tool_calls[0]
    assert (call.function.name, json.loads(call.function.arguments), called.choices[0].finish_reason) == (
        "add",
        {"a": 2},
        "tool_calls",
    )


def test_openai_chat_stream_helper_accumulates_tool_calls(server: FakeServer) -> None:
    server.push(CALL)
    with oai(server).chat.completions.stream(
        model="gpt-x", messages=[{"role": "user", "content": "hi"}], tools=[ADD_OPENAI]
    ) as stream:
        for _ in stream:
            pass
        final = stream.get_final_completion()
    assert json.loads(final.choices[0].message.tool_calls[0].function.arguments) == {"a": 2}


def test_openai_chat_errors_are_the_sdks_own_exceptions(server: FakeServer) -> None:
    server.push({"error": {"kind": "rate_limit", "message": "slow down"}}, {"error": {"kind": "auth"}})
    client = oai(server)
    with pytest.raises(openai.RateLimitError, match="slow down"):
        client.chat.completions.create(model="gpt-x", messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(openai.AuthenticationError):
        client.chat.completions.create(model="gpt-x", messages=[{"role": "user", "content": "hi"}])


def test_openai_chat_structured_output_parses_into_the_sdks_model(server: FakeServer) -> None:
    from pydantic import BaseModel

    class Verdict(BaseModel):
        verdict: str

    server.push({"output": {"verdict": "accept"}})
    parsed = oai(server).chat.completions.parse(
        model="gpt-x", messages=[{"role": "user", "content": "grade"}], response_format=Verdict
    )
    assert parsed.choices[0].message.parsed == Verdict(verdict="accept")
    assert server.requests[-1].body["response_format"]["type"] == "json_schema"


# --- OpenAI Responses --------------------------------------------------------------


def test_openai_responses_buffered_has_the_documented_fields(server: FakeServer) -> None:
    server.push({"text": "hello there"})
    response = oai(server).responses.create(model="gpt-x", input="hi", instructions="Be brief.")
    assert response.output_text == "hello there" and response.status == "completed"
    assert response.instructions == "Be brief." and response.tools == [] and response.parallel_tool_calls is True
    assert response.usage is not None and response.usage.input_tokens_details.cached_tokens == 0


def test_openai_responses_stream_helper_reads_a_text_reply(server: FakeServer) -> None:
    server.push({"text": "streamed words here"})
    with oai(server).responses.stream(model="gpt-x", input="hi") as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    assert final.output_text == "streamed words here"
    assert kinds[:4] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
    ]
    assert kinds[-4:] == [
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]


def test_openai_responses_stream_helper_reads_a_function_call(server: FakeServer) -> None:
    server.push(CALL)
    with oai(server).responses.stream(model="gpt-x", input="hi", tools=[ADD_RESPONSES]) as stream:
        done = [e for e in stream if e.type == "response.function_call_arguments.done"]
        final = stream.get_final_response()
    assert json.loads(done[0].arguments) == {"a": 2}
    assert (final.output[0].name, json.loads(final.output[0].arguments)) == ("add", {"a": 2})


def _sdk_outcome(client: Any, **request: Any) -> tuple[list[tuple[str, Any]], str]:
    """What `responses.stream()` gives a user: the events (item statuses kept) and how the stream ended."""
    seen: list[tuple[str, Any]] = []
    try:
        with client.responses.stream(model="gpt-x", input="hi", **request) as stream:
            for event in stream:
                if event.type == "response.output_text.delta":
                    continue  # how many deltas depends on the text
                item = getattr(event, "item", None) or getattr(event, "response", None)
                seen.append((event.type, getattr(item, "status", None)))
            stream.get_final_response()
    except openai.APIError as exc:
        return seen, f"APIError: {type(exc.body).__name__} body"
    except RuntimeError as exc:  # the SDK's own complaint about the shape of the stream
        return seen, f"RuntimeError: {exc}"
    return seen, "final response"


def _recorded(name: str) -> Any:
    """An openai client whose every request is answered with the recorded stream `name` (real API bytes)."""
    import httpx2

    from fixtures import FIXTURES

    body = (FIXTURES / "openai" / f"{name}.sse").read_bytes()
    transport = httpx2.MockTransport(
        lambda _: httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)
    )
    return _held(
        openai.OpenAI(
            base_url="http://recorded.invalid/v1",
            api_key="any",
            max_retries=0,
            http_client=httpx2.Client(transport=transport),
        )
    )


def test_openai_responses_stream_cut_short_by_max_output_tokens_ends_as_the_real_api_does(server: FakeServer) -> None:
    # A user's app meets the same stream, and the same SDK outcome, from the fake as from the API.
    server.push({"text": "one two three", "finish_reason": "length"})
    fake = _sdk_outcome(oai(server), max_output_tokens=50)
    real = _sdk_outcome(_recorded("responses_stream_incomplete_max_output_tokens"), max_output_tokens=50)
    assert fake == real
    assert fake[0][-2:] == [("response.output_item.done", "incomplete"), ("response.incomplete", "incomplete")]


def test_openai_responses_in_band_error_surfaces_as_the_sdks_api_error(server: FakeServer) -> None:
    server.push({"text": "one two three", "stream_error": {"kind": "quota_exceeded", "message": "boom", "after": 2}})
    fake = _sdk_outcome(oai(server))
    assert fake == _sdk_outcome(_recorded("responses_stream_error_insufficient_quota"))
    server.push({"text": "one two three", "stream_error": {"kind": "server_error", "message": "boom", "after": 5}})
    with pytest.raises(openai.APIError, match="boom") as raised:
        with oai(server).responses.stream(model="gpt-x", input="hi") as stream:
            for _ in stream:
                pass
    assert raised.value.body == {"message": "boom", "type": "server_error", "param": None, "code": "server_error"}


def test_openai_responses_structured_output(server: FakeServer) -> None:
    server.push({"output": {"verdict": "revise"}})
    fmt = {"type": "json_schema", "name": "verdict", "schema": VERDICT, "strict": True}
    response = oai(server).responses.create(model="gpt-x", input="grade", text={"format": fmt})
    assert json.loads(response.output_text) == {"verdict": "revise"}
    assert response.text.format.type == "json_schema"


def test_an_agents_replies_are_reached_through_the_base_url(server: FakeServer) -> None:
    server.script.extend({"triage": [{"text": "from triage"}], "*": [{"text": "anyone"}]})
    assert oai(server, "triage").responses.create(model="gpt-x", input="hi").output_text == "from triage"
    assert oai(server).responses.create(model="gpt-x", input="hi").output_text == "anyone"


def test_an_agents_replies_are_reached_through_request_metadata(server: FakeServer) -> None:
    server.script.extend({"writer": [{"text": "by metadata"}, {"text": "by user"}], "*": [{"text": "anyone"}]})
    client = oai(server)
    first = client.chat.completions.create(
        model="gpt-x", messages=[{"role": "user", "content": "hi"}], metadata={"agent": "writer"}, store=True
    )
    second = client.chat.completions.create(model="gpt-x", messages=[{"role": "user", "content": "hi"}], user="writer")
    assert (first.choices[0].message.content, second.choices[0].message.content) == ("by metadata", "by user")


# --- Anthropic ---------------------------------------------------------------------


def test_anthropic_buffered_streamed_and_tool_use(server: FakeServer) -> None:
    server.push({"text": "hello there"}, {"text": "streamed words here"}, CALL)
    client = claude(server)
    message = client.messages.create(model="claude-x", max_tokens=100, messages=[{"role": "user", "content": "hi"}])
    assert message.content[0].text == "hello there" and message.stop_reason == "end_turn"
    with client.messages.stream(
        model="claude-x", max_tokens=100, messages=[{"role": "user", "content": "hi"}]
    ) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == final.content[0].text == "streamed words here"
    called = client.messages.create(
        model="claude-x", max_tokens=100, messages=[{"role": "user", "content": "hi"}], tools=[ADD_ANTHROPIC]
    )
    use = called.content[0]
    assert (use.type, use.name, use.input, called.stop_reason) == ("tool_use", "add", {"a": 2}, "tool_use")


def test_anthropic_errors_are_the_sdks_own_exceptions(server: FakeServer) -> None:
    server.push({"error": {"kind": "rate_limit", "message": "slow down"}}, {"error": {"kind": "server_error"}})
    client = claude(server)
    with pytest.raises(anthropic.RateLimitError, match="slow down"):
        client.messages.create(model="claude-x", max_tokens=100, messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(anthropic.APIStatusError) as raised:
        client.messages.create(model="claude-x", max_tokens=100, messages=[{"role": "user", "content": "hi"}])
    assert raised.value.status_code == 529


def test_anthropic_structured_output_and_a_forced_answer_tool(server: FakeServer) -> None:
    server.push({"output": {"verdict": "accept"}}, {"output": {"verdict": "revise"}})
    client = claude(server)
    native = client.messages.create(
        model="claude-x",
        max_tokens=100,
        messages=[{"role": "user", "content": "grade"}],
        output_config={"format": {"type": "json_schema", "schema": VERDICT}},
    )
    assert json.loads(native.content[0].text) == {"verdict": "accept"}
    forced = client.messages.create(
        model="claude-x",
        max_tokens=100,
        messages=[{"role": "user", "content": "grade"}],
        tools=[{"name": "final_answer", "input_schema": VERDICT}],
        tool_choice={"type": "tool", "name": "final_answer"},
    )
    assert (forced.content[0].name, forced.content[0].input) == ("final_answer", {"verdict": "revise"})


# --- Google (google-genai) ------------------------------------------------------------


def test_gemini_buffered_streamed_and_function_calls(server: FakeServer) -> None:
    server.push({"text": "hello there"}, {"text": "streamed words here"}, CALL)
    client = gemini(server)
    assert client.models.generate_content(model="gemini-x", contents="hi").text == "hello there"
    chunks = list(client.models.generate_content_stream(model="gemini-x", contents="hi"))
    assert "".join(c.text or "" for c in chunks) == "streamed words here"
    called = client.models.generate_content(model="gemini-x", contents="hi")
    assert (called.function_calls[0].name, called.function_calls[0].args) == ("add", {"a": 2})


def test_gemini_errors_are_the_sdks_own_exceptions(server: FakeServer) -> None:
    server.push({"error": {"kind": "rate_limit", "message": "slow down"}}, {"error": {"kind": "model_not_found"}})
    client = gemini(server)
    with pytest.raises(genai_errors.ClientError) as raised:
        client.models.generate_content(model="gemini-x", contents="hi")
    assert raised.value.code == 429 and "slow down" in str(raised.value)
    with pytest.raises(genai_errors.ClientError) as missing:
        client.models.generate_content(model="gemini-x", contents="hi")
    assert missing.value.code == 404


def test_gemini_structured_output(server: FakeServer) -> None:
    server.push({"output": {"verdict": "accept"}})
    config = genai_types.GenerateContentConfig(response_mime_type="application/json", response_json_schema=VERDICT)
    client = gemini(server)
    reply = client.models.generate_content(model="gemini-x", contents="grade", config=config)
    assert json.loads(reply.text) == {"verdict": "accept"}
    assert server.requests[-1].body["generationConfig"]["responseJsonSchema"] == VERDICT


def test_gemini_reaches_an_agents_replies_through_the_base_url(server: FakeServer) -> None:
    server.script.extend({"triage": [{"text": "from triage"}]})
    client = gemini(server, "triage")
    assert client.models.generate_content(model="gemini-x", contents="hi").text == "from triage"


# --- an error in the middle of a stream ------------------------------------------------


def test_each_sdk_raises_on_an_in_band_stream_error(server: FakeServer) -> None:
    server.push(
        *[{"text": "one two three four", "stream_error": {"kind": "server_error", "message": "boom", "after": 3}}] * 3
    )
    with pytest.raises(openai.APIError, match="boom"):
        for _ in oai(server).chat.completions.create(
            model="gpt-x", messages=[{"role": "user", "content": "hi"}], stream=True
        ):
            pass
    with pytest.raises(anthropic.APIStatusError, match="boom"):
        with claude(server).messages.stream(
            model="claude-x", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        ) as stream:
            for _ in stream:
                pass
    client = gemini(server)
    with pytest.raises(genai_errors.ServerError, match="boom"):
        for _ in client.models.generate_content_stream(model="gemini-x", contents="hi"):
            pass
