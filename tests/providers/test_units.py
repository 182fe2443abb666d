"""The small pieces on their own: SSE framing, argument parsing, finish tables, error tokens, backoff, keys."""

from __future__ import annotations

import asyncio
from email.utils import format_datetime
from datetime import datetime, timedelta, timezone

import httpx
import pytest

from plait.runtime.providers import errors, finish, make_provider, retry
from plait.core.kinds import ModelNode
from plait.runtime.providers.base import ProviderError, ToolCall
from plait.runtime.providers.calls import parse_arguments, tool_call
from plait.runtime.providers.keys import resolve_key
from plait.runtime.providers.sse import SSEDecoder

from helpers import request


# --- SSE ------------------------------------------------------------------------------


def decode(*chunks: bytes) -> list[tuple[str | None, str]]:
    decoder = SSEDecoder()
    out = []
    for chunk in chunks:
        out += decoder.feed(chunk)
    return out + decoder.close()


def test_sse_crlf_split_across_chunks() -> None:
    assert decode(b'data: {"a":1}\r', b"\n\r\n", b'data: {"b":2}\r\n\r\n') == [(None, '{"a":1}'), (None, '{"b":2}')]


def test_sse_multibyte_character_split_across_chunks() -> None:
    raw = 'data: {"t":"é✓"}\n\n'.encode()
    assert decode(raw[:13], raw[13:15], raw[15:]) == [(None, '{"t":"é✓"}')]


def test_sse_event_names_comments_padding_and_multiline_data() -> None:
    body = b': keep-alive\n\nevent: ping\ndata: {"type": "ping"}   \n\nevent: x\ndata: a\ndata: b\n\n'
    assert decode(body) == [("ping", '{"type": "ping"}   '), ("x", "a\nb")]


def test_sse_last_event_without_blank_line_counts_but_partial_line_does_not() -> None:
    assert decode(b"data: 1\n\ndata: 2\n") == [(None, "1"), (None, "2")]
    assert decode(b"data: 1\n\ndata: 2") == [(None, "1")]
    assert decode(b"data:tight\n\n\n\n\ndata: 3\n\n") == [(None, "tight"), (None, "3")]


def test_sse_chunk_of_plain_data_lines_falls_back_for_any_other_block() -> None:
    # One chunk of `data: ` lines is split in one go; any other line in it must not be folded into a neighbour.
    assert decode(b"data: 1\n\ndata: 2\n\ndata: \n\n") == [(None, "1"), (None, "2"), (None, "")]
    assert decode(b"data: 1\n\ndata: 2\ndata: 3\n\ndata: 4\n\n") == [(None, "1"), (None, "2\n3"), (None, "4")]
    assert decode(b"data: 1\n\n: ping\n\ndata:2\n\nevent: e\ndata: 3\n\n") == [(None, "1"), (None, "2"), ("e", "3")]
    assert decode(b"data: 1\r\n\r\ndata: 2\r\n\r\n\r\n\r\ndata: 3\n\n") == [(None, "1"), (None, "2"), (None, "3")]


# --- arguments and finish reasons -----------------------------------------------------


@pytest.mark.parametrize(
    "raw,expected",
    [
        ("", ({}, False)),
        ("  ", ({}, False)),
        ('{"a": 1}', ({"a": 1}, False)),
        ('{"a": ', (None, True)),
        ("[1]", (None, True)),
        ("null", (None, True)),
    ],
)
def test_argument_parsing_never_guesses(raw: str, expected: tuple) -> None:
    assert parse_arguments(raw) == expected


def test_object_arguments_keep_a_raw_text() -> None:
    call = tool_call("id", "f", {"x": "é"})
    assert call.arguments == {"x": "é"} and call.raw_arguments == '{"x": "é"}' and not call.malformed


def test_finish_reasons_are_an_open_set() -> None:
    call = ToolCall("1", "f", {})
    bad = ToolCall("2", "f", None, "{", True)
    assert finish.normalise(finish.GOOGLE, "TOO_MANY_TOOL_CALLS") == "too_many_tool_calls"
    assert finish.normalise(finish.OPENAI_RESPONSES, "max_messages") == "max_messages"
    assert finish.normalise(finish.ANTHROPIC, "pause_turn") == "pause_turn"
    assert finish.normalise(finish.OPENAI_CHAT, "stop", [call]) == "tool_calls"
    assert finish.normalise(finish.OPENAI_CHAT, None, [call]) == "tool_calls"
    assert finish.normalise(finish.OPENAI_CHAT, "length", [call]) == "length"
    assert finish.normalise(finish.OPENAI_CHAT, "tool_calls", [call, bad]) == "malformed_tool_call"
    assert finish.normalise(finish.GOOGLE, "SAFETY") == "content_filter"
    assert finish.normalise(finish.ANTHROPIC, "refusal") == "content_filter"


# --- errors ---------------------------------------------------------------------------


def test_error_shapes_of_compatible_servers() -> None:
    vllm = b'{"object":"error","message":"This model\'s maximum context length is 4096 tokens.","type":"BadRequestError","code":400}'
    assert errors.from_response(400, {}, vllm).kind == "context_length"
    lmstudio = b'{"error":"Model does not exist"}'
    err = errors.from_response(404, {}, lmstudio)
    assert (err.kind, err.message) == ("model_not_found", "Model does not exist")
    llamacpp = b'{"error":{"code":400,"message":"request exceeds context","type":"exceed_context_size_error"}}'
    assert errors.from_response(400, {}, llamacpp).kind == "context_length"
    html = b"<html><body>502 Bad Gateway</body></html>"
    err = errors.from_response(502, {}, html)
    assert err.kind == "server_error" and "502 Bad Gateway" in err.message
    assert errors.from_response(503, {}, b"").message == "HTTP 503"


def test_google_retry_info_and_daily_quota() -> None:
    body = (
        b'{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED","details":['
        b'{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier"}]},'
        b'{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"34s"}]}}'
    )
    err = errors.from_response(429, {}, body)
    assert err.kind == "quota_exceeded" and err.retry_after == 34.0


def test_retry_after_forms() -> None:
    assert errors.retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert errors.retry_after({"retry-after": "2.5"}) == 2.5
    future = format_datetime(datetime.now(timezone.utc) + timedelta(seconds=30), usegmt=True)
    assert 25 < errors.retry_after({"retry-after": future}) <= 30
    assert errors.retry_after({}, None, "Please try again in 84ms.") == pytest.approx(0.084)
    assert errors.retry_after({"retry-after": "soon"}) is None


def test_transport_exceptions_map_to_network_and_timeout() -> None:
    assert errors.from_exception(httpx.ConnectError("refused")).kind == "network"
    assert errors.from_exception(httpx.RemoteProtocolError("closed")).kind == "network"
    assert errors.from_exception(httpx.ReadTimeout("slow")).kind == "timeout"


def test_in_band_error_shapes() -> None:
    nested = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    assert errors.from_payload(nested).kind == "server_error"
    flat = {"type": "error", "code": "insufficient_quota", "message": "You exceeded your current quota"}
    assert errors.from_payload(flat).kind == "quota_exceeded"


# --- retry policy ---------------------------------------------------------------------


def test_backoff_doubles_with_jitter_and_caps() -> None:
    assert [retry.backoff(n, lambda: 1.0) for n in range(6)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]
    assert retry.backoff(0, lambda: 0.0) == 0.375


def test_next_delay_respects_the_deadline() -> None:
    err = ProviderError("server_error", "boom")
    import time

    assert retry.next_delay(err, 0, 2, time.monotonic() + 0.1) is None
    assert retry.next_delay(err, 0, 2, None) is not None
    assert retry.next_delay(err, 2, 2, None) is None


def test_with_retries_gives_up_after_the_budget(sleeps) -> None:
    attempts = []

    async def attempt():
        attempts.append(1)
        raise ProviderError("network", f"try {len(attempts)}")

    with pytest.raises(ProviderError, match="try 4"):
        asyncio.run(retry.with_retries(attempt, 3, None))
    assert len(attempts) == 4 and len(sleeps) == 3


# --- keys -----------------------------------------------------------------------------


def test_missing_key_is_an_auth_error_before_any_request(monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    provider = make_provider(
        ModelNode(name="strong", provider="anthropic", model_id="claude-x", base_url="http://127.0.0.1:9")
    )
    with pytest.raises(ProviderError) as info:
        asyncio.run(provider.complete(request()))
    assert info.value.kind == "auth" and "ANTHROPIC_API_KEY" in info.value.message


def test_google_accepts_either_variable(monkeypatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", "g-key")
    assert resolve_key(ModelNode(name="g", provider="google", model_id="gemini")).reveal() == "g-key"
    assert resolve_key(ModelNode(name="c", provider="openai-compatible", model_id="llama", base_url="http://x")) is None


def test_compatible_without_base_url_is_refused() -> None:
    with pytest.raises(ProviderError, match="base_url"):
        make_provider(ModelNode(name="local", provider="openai-compatible", model_id="llama3"))


@pytest.mark.parametrize(
    "flavour,header",
    [
        ("openai", "authorization"),
        ("anthropic", "x-api-key"),
        ("google", "x-goog-api-key"),
        ("openai-compatible", "authorization"),
    ],
)
def test_key_goes_in_its_header_and_nowhere_else(plait_fake_server, monkeypatch, flavour: str, header: str) -> None:
    secret = "sk-test-SECRET-1234567890"
    monkeypatch.setenv("MY_KEY", secret)
    plait_fake_server.push({"error": {"kind": "auth", "message": "bad key"}})
    provider = make_provider(plait_fake_server.config(flavour, api_key_env="MY_KEY", retries=0))

    async def go():
        try:
            await provider.complete(request())
        except ProviderError as err:
            return err
        finally:
            await provider.aclose()

    err = asyncio.run(go())
    recorded = plait_fake_server.requests[-1]
    assert secret in recorded.headers[header]
    assert secret not in recorded.path
    for text in (repr(provider), str(err), repr(err), str(err.raw), repr(provider.__dict__)):
        assert secret not in text


def test_refusals_read_the_same_streamed_and_buffered() -> None:
    from plait.runtime.providers.base import ModelRequest
    from plait.runtime.providers.openai_chat import ChatStream, parse_chat
    from plait.runtime.providers.openai_responses import ResponsesStream, parse_responses

    req = ModelRequest("m", [])
    chat = ChatStream(req)
    chat.feed(None, '{"choices":[{"delta":{"role":"assistant","content":null,"refusal":"I can\'t help with that."}}]}')
    chat.feed(None, '{"choices":[{"delta":{},"finish_reason":"stop"}]}')
    streamed = chat.finish()[-1].response
    buffered = parse_chat(
        {"choices": [{"message": {"content": None, "refusal": "I can't help with that."}, "finish_reason": "stop"}]},
        req,
    )
    assert streamed.text == buffered.text == "I can't help with that."

    responses = ResponsesStream(req)
    events = responses.feed(
        "response.refusal.delta", '{"type":"response.refusal.delta","output_index":0,"delta":"No."}'
    )
    assert [e.text for e in events] == ["No."]
    final = {"status": "completed", "output": [{"type": "message", "content": [{"type": "refusal", "refusal": "No."}]}]}
    assert parse_responses(final, req).text == "No."


def _recording_handler(body: bytes, headers: bytes, seen: list[tuple[str, dict[str, str], bytes]]):
    """A one-request HTTP/1.1 handler: records (request line, lowercased headers, body), answers 200 with `body`."""

    async def handle(reader, writer):
        head = (await reader.readuntil(b"\r\n\r\n")).decode()
        lines = head.split("\r\n")
        fields = dict(line.lower().split(": ", 1) for line in lines[1:] if line)
        seen.append((lines[0], fields, await reader.readexactly(int(fields["content-length"]))))
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n%scontent-length: %d\r\n\r\n%s"
            % (headers, len(body), body)
        )
        await writer.drain()
        writer.close()

    return handle


def test_gzip_response_is_decoded(monkeypatch) -> None:
    """Real APIs compress JSON replies; the transport leaves decoding to httpx, which must still happen."""
    import gzip
    import json

    from plait.runtime.providers.base import Message, ModelRequest

    body = gzip.compress(
        json.dumps({"choices": [{"message": {"content": "zipped"}, "finish_reason": "stop"}]}).encode()
    )
    seen: list[tuple[str, dict[str, str], bytes]] = []

    async def go():
        server = await asyncio.start_server(
            _recording_handler(body, b"content-encoding: gzip\r\n", seen), "127.0.0.1", 0
        )
        port = server.sockets[0].getsockname()[1]
        monkeypatch.setenv("K", "x")
        provider = make_provider(
            ModelNode(
                name="m", provider="openai", model_id="m", base_url=f"http://127.0.0.1:{port}/v1", api_key_env="K"
            )
        )
        try:
            return await provider.complete(ModelRequest("m", [Message.user("hi")]))
        finally:
            await provider.aclose()
            server.close()

    assert asyncio.run(go()).text == "zipped"
    assert seen[0][1]["accept-encoding"].startswith("gzip")


def test_direct_path_sends_what_client_send_sends(monkeypatch) -> None:
    """make_client's calls bypass httpx's Request/Response; the wire must not tell the two paths apart."""
    import json

    from plait.runtime.providers.base import Message, ModelRequest
    from plait.runtime.providers.transport import AiohttpTransport, direct_transport, make_client

    reply = json.dumps({"choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}]}).encode()
    seen: list[tuple[str, dict[str, str], bytes]] = []

    async def go():
        server = await asyncio.start_server(_recording_handler(reply, b"", seen), "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        monkeypatch.setenv("K", "x")
        config = ModelNode(
            name="m", provider="openai", model_id="m", base_url=f"http://127.0.0.1:{port}/v1 x", api_key_env="K"
        )
        direct = make_client()

        async def hook(_request: httpx.Request) -> None:
            pass

        # The same transport under a client with an event hook, which goes through client.send.
        hooked = httpx.AsyncClient(transport=AiohttpTransport(), event_hooks={"request": [hook]})
        hooked.headers.clear()
        assert direct_transport(direct) is not None and direct_transport(hooked) is None
        try:
            for client in (direct, hooked):
                provider = make_provider(config, client=client)
                assert (await provider.complete(ModelRequest("m", [Message.user("hi")]))).text == "ok"
        finally:
            await direct.aclose()
            await hooked.aclose()
            server.close()

    asyncio.run(go())
    (line_a, head_a, body_a), (line_b, head_b, body_b) = seen
    assert line_a == line_b == "POST /v1%20x/chat/completions HTTP/1.1"
    assert body_a == body_b
    assert head_a == head_b, (head_a, head_b)
