"""Reply → OpenAI Chat Completions JSON and SSE (also served to openai-compatible clients)."""

from __future__ import annotations

import time
from typing import Any

from .reply import Reply, fragments, sse, words

FINISH = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "content_filter": "content_filter",
    "malformed_tool_call": "tool_calls",
}

#: kind → (status, type, code), as the real API answers.
ERRORS: dict[str, tuple[int, str, str]] = {
    "auth": (401, "invalid_request_error", "invalid_api_key"),
    "model_not_found": (404, "invalid_request_error", "model_not_found"),
    "rate_limit": (429, "requests", "rate_limit_exceeded"),
    "quota_exceeded": (429, "insufficient_quota", "insufficient_quota"),
    "context_length": (400, "invalid_request_error", "context_length_exceeded"),
    "invalid_request": (400, "invalid_request_error", "invalid_value"),
    "unsupported": (400, "invalid_request_error", "unsupported_value"),
    "content_filter": (400, "invalid_request_error", "content_filter"),
    "server_error": (500, "server_error", "server_error"),
    "timeout": (504, "server_error", "timeout"),
}


def error(kind: str, message: str) -> tuple[int, dict[str, Any]]:
    status, type_, code = ERRORS.get(kind, ERRORS["server_error"])
    return status, {"error": {"message": message, "type": type_, "param": None, "code": code}}


def stream_error(kind: str, message: str) -> list[bytes]:
    return [sse(error(kind, message)[1])]


def _tool_calls(reply: Reply) -> list[dict[str, Any]]:
    return [
        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}} for c in reply.calls
    ]


def body(reply: Reply, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None, "refusal": None}
    if reply.calls:
        message["tool_calls"] = _tool_calls(reply)
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": reply.finish(FINISH)}],
        "usage": {
            "prompt_tokens": reply.input_tokens,
            "completion_tokens": reply.output_tokens,
            "total_tokens": reply.input_tokens + reply.output_tokens,
        },
    }


def events(reply: Reply, model: str) -> tuple[list[bytes], list[bytes]]:
    head = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time()), "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return sse(
            {
                **head,
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
                "usage": None,
            }
        )

    out = [chunk({"role": "assistant", "content": "" if not reply.calls else None})]
    out += [chunk({"content": piece}) for piece in words(reply.text)]
    for index, call in enumerate(reply.calls):
        opening = {"index": index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}
        out.append(chunk({"tool_calls": [opening]}))
        out += [
            chunk({"tool_calls": [{"index": index, "function": {"arguments": p}}]}) for p in fragments(call.arguments)
        ]
    usage = {
        "prompt_tokens": reply.input_tokens,
        "completion_tokens": reply.output_tokens,
        "total_tokens": reply.input_tokens + reply.output_tokens,
    }
    # The finish chunk counts as the terminator: a stream cut before it is truncated.
    return out, [chunk({}, reply.finish(FINISH)), sse({**head, "choices": [], "usage": usage}), b"data: [DONE]\n\n"]
