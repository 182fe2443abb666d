"""What a provider said reaches plait as it was said: finish reasons, block reasons, one choice, a complete stream.

And a 200 that says nothing (`{}`, or neither content nor a finish reason) is a
`server_error`, retried and then left to a fallback, never an empty answer.
"""

from __future__ import annotations

import json

import pytest

from plait.runtime.providers.anthropic import AnthropicStream
from plait.runtime.providers.base import ProviderError, ResponseDone, TextDelta
from plait.runtime.providers.google import GoogleStream, parse_google
from plait.runtime.providers.openai_chat import ChatStream, parse_chat
from plait.runtime.providers.sse import SSEDecoder

from conftest import FLAVOURS
from fixtures import FIXTURES
from helpers import request, run_once

GEMINI_ENDINGS = ["UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS", "MALFORMED_RESPONSE", "MODEL_ARMOR", "SOMETHING_NEW"]


@pytest.mark.parametrize("stream", [False, True], ids=["buffered", "streamed"])
@pytest.mark.parametrize("reason", GEMINI_ENDINGS)
def test_gemini_finish_reasons_reach_plait_as_themselves(plait_fake_server, reason: str, stream: bool) -> None:
    plait_fake_server.push({"text": "", "finish_reason": reason})
    response, _ = run_once(plait_fake_server, "google", stream, request(tools=[]))
    assert response.raw_finish_reason == reason
    assert response.finish_reason not in ("stop", "tool_calls")
    expected = "content_filter" if reason == "MODEL_ARMOR" else reason.lower()
    assert response.finish_reason == expected


@pytest.mark.parametrize("block", ["PROHIBITED_CONTENT", "BLOCKLIST", "SAFETY", "OTHER"])
def test_a_blocked_prompt_reports_its_own_block_reason(block: str) -> None:
    data = {
        "promptFeedback": {"blockReason": block},
        "usageMetadata": {"promptTokenCount": 7},
        "modelVersion": "gemini-x",
    }
    response = parse_google(data, request())
    assert response.raw_finish_reason == block and response.text == ""
    state = GoogleStream(request())
    state.feed(None, json.dumps(data))
    [done] = state.finish()
    assert isinstance(done, ResponseDone) and done.response.raw_finish_reason == block


def test_a_chat_stream_with_several_choices_reads_one() -> None:
    state = ChatStream(request())
    events = []
    for index, text in [(0, "Hello "), (1, "Bonjour "), (0, "world"), (1, "le monde")]:
        chunk = {"id": "c", "choices": [{"index": index, "delta": {"content": text}, "finish_reason": None}]}
        events += state.feed(None, json.dumps(chunk))
    both = {
        "id": "c",
        "choices": [
            {"index": 1, "delta": {}, "finish_reason": "length"},
            {"index": 0, "delta": {}, "finish_reason": "stop"},
        ],
    }
    events += state.feed(None, json.dumps(both))
    events += state.feed(None, "[DONE]")
    events += state.finish()
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello world"
    assert events[-1].response.text == "Hello world" and events[-1].response.finish_reason == "stop"


def test_a_buffered_chat_reply_with_several_choices_reads_the_first() -> None:
    data = {
        "choices": [
            {"index": 1, "message": {"content": "second"}, "finish_reason": "stop"},
            {"index": 0, "message": {"content": "first"}, "finish_reason": "stop"},
        ]
    }
    assert parse_chat(data, request()).text == "first"


def test_an_anthropic_stream_ending_without_a_final_newline_is_complete() -> None:
    raw = (FIXTURES / "anthropic" / "messages_stream_max_tokens.sse").read_bytes().rstrip(b"\r\n")
    assert raw.endswith(b"}")  # the recording ends on message_stop's data line
    state, decoder = AnthropicStream(request()), SSEDecoder()
    events = []
    for name, data in decoder.feed(raw) + decoder.close():
        events += state.feed(name, data)
    [done] = state.finish()
    assert isinstance(done, ResponseDone) and done.response.raw_finish_reason == "max_tokens"


def test_a_stream_cut_inside_its_last_line_is_still_incomplete() -> None:
    raw = (FIXTURES / "anthropic" / "messages_stream_max_tokens.sse").read_bytes().rstrip(b"\r\n")
    state, decoder = AnthropicStream(request()), SSEDecoder()
    for name, data in decoder.feed(raw[:-3]) + decoder.close():
        state.feed(name, data)
    with pytest.raises(ProviderError) as raised:
        state.finish()
    assert raised.value.kind == "network"


EMPTY_BODIES = {
    "openai": [{}, {"id": "x", "choices": [{"index": 0, "message": {}, "finish_reason": None}]}],
    "openai-compatible": [{}, {"choices": []}],
    "openai-responses": [{}, {"id": "resp_x", "object": "response", "output": []}],
    "anthropic": [{}, {"id": "msg_x", "type": "message", "content": [], "stop_reason": None}],
    "google": [{}, {"candidates": [{"content": {"parts": []}}]}],
}


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_a_reply_that_says_nothing_is_a_server_error_and_is_retried(plait_fake_server, sleeps, flavour: str) -> None:
    for body in EMPTY_BODIES[flavour]:
        plait_fake_server.push({"body": body})
        err = run_once(plait_fake_server, flavour, False, retries=0)
        assert isinstance(err, ProviderError) and err.kind == "server_error", (flavour, body)
        plait_fake_server.push({"body": body}, {"text": "a real answer"})
        response, _ = run_once(plait_fake_server, flavour, False, retries=1)
        assert response.text == "a real answer", (flavour, body)
