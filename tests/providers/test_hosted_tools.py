"""Hosted tools on every wire: what the request body asks for (the shapes of each API's reference) and what the
reply's citations, queries and code runs read as (realistic replies written from the same references)."""

from __future__ import annotations

import json

import pytest

from plait.runtime.providers import anthropic, google, openai_chat, openai_responses
from plait.runtime.providers.base import Message, ModelRequest, ToolSpec

WEB = {"type": "hosted", "hosted": "web_search", "options": {}}
CODE = {"type": "hosted", "hosted": "code_execution", "options": {}}
LOOKUP = ToolSpec("lookup", "Look it up.", {"type": "object", "properties": {"q": {"type": "string"}}})


def request(*hosted: dict, tools: list[ToolSpec] | None = None, model: str = "m") -> ModelRequest:
    return ModelRequest(model, [Message.user("Capital of France?")], tools=tools or [], hosted=list(hosted))


# --- request bodies ----------------------------------------------------------------------


def test_chat_completions_asks_for_web_search_options_not_a_function():
    web = {**WEB, "options": {"context_size": "low"}}
    body = openai_chat.chat_body(request(web), stream=False, temperature=None, max_tokens=None)
    assert body["web_search_options"] == {"search_context_size": "low"}
    assert "tools" not in body
    plain = openai_chat.chat_body(request(WEB), stream=False, temperature=None, max_tokens=None)
    assert plain["web_search_options"] == {}


def test_responses_puts_web_search_beside_the_function_tools():
    web = {**WEB, "options": {"context_size": "high", "allowed_domains": ["wikipedia.org"]}}
    req = request(web, tools=[LOOKUP])
    req.tool_choice = "lookup"
    body = openai_responses.responses_body(req, stream=False, temperature=None, max_tokens=None)
    assert body["tools"][0] == {
        "type": "web_search",
        "search_context_size": "high",
        "filters": {"allowed_domains": ["wikipedia.org"]},
    }
    assert body["tools"][1]["type"] == "function" and body["tools"][1]["name"] == "lookup"
    assert body["tool_choice"] == {"type": "function", "name": "lookup"}
    alone = openai_responses.responses_body(request(WEB), stream=False, temperature=None, max_tokens=None)
    assert alone["tools"] == [{"type": "web_search"}] and "tool_choice" not in alone


def test_anthropic_sends_its_versioned_server_tool_with_its_options():
    web = {**WEB, "options": {"max_uses": 3, "allowed_domains": ["wikipedia.org"], "context_size": "low"}}
    body = anthropic.anthropic_body(request(web, tools=[LOOKUP]), stream=False, temperature=None, max_tokens=None)
    assert body["tools"][0] == {
        "type": "web_search_20250305",
        "name": "web_search",
        "max_uses": 3,
        "allowed_domains": ["wikipedia.org"],
    }
    assert body["tools"][1]["name"] == "lookup" and "input_schema" in body["tools"][1]


def test_gemini_asks_for_google_search_and_code_execution():
    body = google.google_body(request(WEB, CODE, tools=[LOOKUP]), temperature=None, max_tokens=None)
    assert body["tools"][0]["functionDeclarations"][0]["name"] == "lookup"
    assert body["tools"][1:] == [{"google_search": {}}, {"code_execution": {}}]
    alone = google.google_body(request(WEB), temperature=None, max_tokens=None)
    assert alone["tools"] == [{"google_search": {}}]


def test_a_request_without_hosted_tools_is_unchanged():
    for body in (
        openai_chat.chat_body(request(), stream=False, temperature=None, max_tokens=None),
        openai_responses.responses_body(request(), stream=False, temperature=None, max_tokens=None),
        anthropic.anthropic_body(request(), stream=False, temperature=None, max_tokens=None),
        google.google_body(request(), temperature=None, max_tokens=None),
    ):
        assert "tools" not in body and "web_search_options" not in body


# --- replies -------------------------------------------------------------------------------

PARIS = "https://en.wikipedia.org/wiki/Paris"
CHAT_REPLY = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "model": "gpt-4o-search-preview-2025-03-11",
    "choices": [
        {
            "index": 0,
            "finish_reason": "stop",
            "message": {
                "role": "assistant",
                "content": "Paris is the capital of France. ([en.wikipedia.org](https://en.wikipedia.org/wiki/Paris))",
                "refusal": None,
                "annotations": [
                    {
                        "type": "url_citation",
                        "url_citation": {"start_index": 0, "end_index": 31, "title": "Paris - Wikipedia", "url": PARIS},
                    }
                ],
            },
        }
    ],
    "usage": {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30},
}

RESPONSES_REPLY = {
    "id": "resp_1",
    "object": "response",
    "status": "completed",
    "model": "gpt-5-mini",
    "output": [
        {
            "type": "web_search_call",
            "id": "ws_1",
            "status": "completed",
            "action": {"type": "search", "query": "capital of France"},
        },
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [
                {
                    "type": "output_text",
                    "text": "Paris is the capital of France.",
                    "annotations": [
                        {
                            "type": "url_citation",
                            "start_index": 0,
                            "end_index": 5,
                            "title": "Paris - Wikipedia",
                            "url": PARIS,
                        }
                    ],
                }
            ],
        },
    ],
    "usage": {"input_tokens": 10, "output_tokens": 20},
}

ANTHROPIC_REPLY = {
    "id": "msg_01",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "content": [
        {"type": "text", "text": "I'll search for that."},
        {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {"query": "capital of France"}},
        {
            "type": "web_search_tool_result",
            "tool_use_id": "srvtoolu_01",
            "content": [
                {
                    "type": "web_search_result",
                    "url": PARIS,
                    "title": "Paris - Wikipedia",
                    "encrypted_content": "Eq..",
                    "page_age": None,
                }
            ],
        },
        {
            "type": "text",
            "text": "Paris is the capital of France.",
            "citations": [
                {
                    "type": "web_search_result_location",
                    "url": PARIS,
                    "title": "Paris - Wikipedia",
                    "encrypted_index": "Eo..",
                    "cited_text": "Paris is the capital and largest city of France.",
                }
            ],
        },
    ],
    "stop_reason": "end_turn",
    "usage": {"input_tokens": 10, "output_tokens": 20, "server_tool_use": {"web_search_requests": 1}},
}

GEMINI_REPLY = {
    "candidates": [
        {
            "content": {
                "role": "model",
                "parts": [
                    {"text": "Paris is the capital of France. "},
                    {"executableCode": {"language": "PYTHON", "code": "print(2 ** 10)"}},
                    {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1024\n"}},
                    {"text": "2 to the 10th is 1024."},
                ],
            },
            "finishReason": "STOP",
            "groundingMetadata": {
                "webSearchQueries": ["capital of France"],
                "searchEntryPoint": {"renderedContent": "<style>...</style>"},
                "groundingChunks": [
                    {
                        "web": {
                            "uri": "https://vertexaisearch.cloud.google.com/grounding-api-redirect/abc",
                            "title": "wikipedia.org",
                        }
                    }
                ],
                "groundingSupports": [
                    {
                        "segment": {"startIndex": 0, "endIndex": 31, "text": "Paris is the capital of France."},
                        "groundingChunkIndices": [0],
                    }
                ],
            },
        }
    ],
    "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 20},
    "modelVersion": "gemini-2.5-flash",
}


def test_chat_reads_url_citations_with_the_text_they_cite():
    response = openai_chat.parse_chat(CHAT_REPLY, request(WEB))
    assert response.hosted == {
        "web_search": {
            "queries": [],
            "citations": [{"url": PARIS, "title": "Paris - Wikipedia", "text": "Paris is the capital of France."}],
        }
    }


def test_responses_reads_the_search_calls_query_and_the_annotations():
    response = openai_responses.parse_responses(RESPONSES_REPLY, request(WEB))
    assert response.text == "Paris is the capital of France."
    assert response.hosted == {
        "web_search": {
            "queries": ["capital of France"],
            "citations": [{"url": PARIS, "title": "Paris - Wikipedia", "text": "Paris"}],
        }
    }


def test_anthropic_reads_server_tool_queries_and_text_citations_and_no_call_for_plait_to_run():
    response = anthropic.parse_anthropic(ANTHROPIC_REPLY, request(WEB))
    assert response.tool_calls == [] and response.finish_reason == "stop"
    assert response.hosted == {
        "web_search": {
            "queries": ["capital of France"],
            "citations": [
                {"url": PARIS, "title": "Paris - Wikipedia", "text": "Paris is the capital and largest city of France."}
            ],
        }
    }


def test_gemini_reads_grounding_metadata_and_code_runs():
    response = google.parse_google(GEMINI_REPLY, request(WEB, CODE))
    assert response.text == "Paris is the capital of France. 2 to the 10th is 1024."
    assert response.hosted == {
        "web_search": {
            "queries": ["capital of France"],
            "citations": [
                {
                    "url": "https://vertexaisearch.cloud.google.com/grounding-api-redirect/abc",
                    "title": "wikipedia.org",
                    "text": "Paris is the capital of France.",
                }
            ],
        },
        "code_execution": {
            "runs": [{"language": "python", "code": "print(2 ** 10)", "outcome": "ok", "output": "1024\n"}]
        },
    }


@pytest.mark.parametrize(
    "parse, reply",
    [
        (openai_chat.parse_chat, CHAT_REPLY),
        (openai_responses.parse_responses, RESPONSES_REPLY),
        (anthropic.parse_anthropic, ANTHROPIC_REPLY),
        (google.parse_google, GEMINI_REPLY),
    ],
)
def test_a_request_that_asked_for_no_hosted_tool_reads_no_report(parse, reply):
    assert parse(json.loads(json.dumps(reply)), request()).hosted is None


# --- streams ---------------------------------------------------------------------------------


def _fed(state, events):
    for event, payload in events:
        state.feed(event, json.dumps(payload))
    (done,) = [e for e in state.finish() if e.type == "done"]
    return done.response


def test_an_anthropic_stream_reads_the_query_and_the_citations_of_its_deltas():
    events = [
        (
            "message_start",
            {"type": "message_start", "message": {"id": "msg_1", "model": "claude-sonnet-4-5", "usage": {}}},
        ),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": '{"query": "capital'},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": ' of France"}'},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 1}),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}},
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 2,
                "delta": {
                    "type": "citations_delta",
                    "citation": {
                        "type": "web_search_result_location",
                        "url": PARIS,
                        "title": "Paris",
                        "cited_text": "Paris is the capital",
                    },
                },
            },
        ),
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "Paris."}},
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 2}),
        (
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}},
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    response = _fed(anthropic.AnthropicStream(request(WEB)), events)
    assert response.text == "Paris." and response.tool_calls == []
    assert response.hosted == {
        "web_search": {
            "queries": ["capital of France"],
            "citations": [{"url": PARIS, "title": "Paris", "text": "Paris is the capital"}],
        }
    }


def test_a_gemini_stream_gathers_code_runs_across_chunks_and_the_grounding_of_the_last():
    first = {
        "candidates": [
            {"content": {"role": "model", "parts": [{"executableCode": {"language": "PYTHON", "code": "print(1)"}}]}}
        ]
    }
    second = {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [{"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1\n"}}, {"text": "One."}],
                },
                "finishReason": "STOP",
                "groundingMetadata": GEMINI_REPLY["candidates"][0]["groundingMetadata"],
            }
        ],
        "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 4},
    }
    response = _fed(google.GoogleStream(request(WEB, CODE)), [(None, first), (None, second)])
    assert response.text == "One."
    assert response.hosted["code_execution"] == {
        "runs": [{"language": "python", "code": "print(1)", "outcome": "ok", "output": "1\n"}]
    }
    assert response.hosted["web_search"]["queries"] == ["capital of France"]


def test_a_chat_stream_reads_the_annotations_its_deltas_carry():
    chunks = [
        {
            "id": "c1",
            "model": "gpt-4o-search-preview",
            "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Paris is the capital of France."}}],
        },
        {
            "id": "c1",
            "choices": [{"index": 0, "delta": {"annotations": CHAT_REPLY["choices"][0]["message"]["annotations"]}}],
        },
        {"id": "c1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    response = _fed(openai_chat.ChatStream(request(WEB)), [(None, c) for c in chunks])
    assert response.hosted["web_search"]["citations"] == [
        {"url": PARIS, "title": "Paris - Wikipedia", "text": "Paris is the capital of France."}
    ]
