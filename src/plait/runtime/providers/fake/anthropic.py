"""Reply → Anthropic Messages JSON and SSE (event lines, ping, message_stop)."""

from __future__ import annotations

from typing import Any

from .reply import Reply, fragments, sse, words

FINISH = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "content_filter": "refusal",
    "malformed_tool_call": "tool_use",
}

#: kind → (status, error.type). Anthropic has no content-filter error; the token is plait's.
ERRORS: dict[str, tuple[int, str]] = {
    "auth": (401, "authentication_error"),
    "model_not_found": (404, "not_found_error"),
    "rate_limit": (429, "rate_limit_error"),
    "quota_exceeded": (400, "billing_error"),
    "context_length": (400, "invalid_request_error"),
    "invalid_request": (400, "invalid_request_error"),
    "unsupported": (400, "unsupported_parameter"),
    "content_filter": (400, "content_filter"),
    "server_error": (529, "overloaded_error"),
    "timeout": (504, "timeout_error"),
}


def error(kind: str, message: str) -> tuple[int, dict[str, Any]]:
    status, type_ = ERRORS.get(kind, ERRORS["server_error"])
    if kind == "context_length" and "too long" not in message:
        message = f"prompt is too long: 210000 tokens > 200000 maximum ({message})"
    return status, {"type": "error", "error": {"type": type_, "message": message}, "request_id": "req_fake"}


def stream_error(kind: str, message: str) -> list[bytes]:
    payload = error(kind, message)[1]
    return [sse(payload, "error")]


def answer_tool(request: dict[str, Any]) -> str | None:
    """The tool a request forces its answer through (no `output_config`): named, or `any` with a final-answer tool."""
    if request.get("output_config"):
        return None
    choice = request.get("tool_choice") or {}
    if choice.get("type") == "tool":
        return choice.get("name")
    if choice.get("type") == "any":
        names = [t.get("name") for t in request.get("tools") or () if isinstance(t, dict)]
        return next((n for n in names if isinstance(n, str) and n.startswith("final_answer")), None)
    return None


def _content(reply: Reply) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": reply.text}] if reply.text else []
    blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.parsed} for c in reply.calls]
    return blocks


def body(reply: Reply, model: str) -> dict[str, Any]:
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": _content(reply),
        "stop_reason": reply.finish(FINISH),
        "stop_sequence": None,
        "usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens},
    }


def events(reply: Reply, model: str) -> tuple[list[bytes], list[bytes]]:
    message = {**body(reply, model), "content": [], "stop_reason": None}
    message["usage"] = {"input_tokens": reply.input_tokens, "output_tokens": 1}
    out = [sse({"type": "message_start", "message": message}, "message_start")]
    index = 0
    if reply.text:
        out.append(
            sse(
                {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
                "content_block_start",
            )
        )
        out.append(sse({"type": "ping"}, "ping"))
        out += [
            sse(
                {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": w}},
                "content_block_delta",
            )
            for w in words(reply.text)
        ]
        out.append(sse({"type": "content_block_stop", "index": 0}, "content_block_stop"))
        index = 1
    for n, call in enumerate(reply.calls, start=index):
        block = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
        out.append(sse({"type": "content_block_start", "index": n, "content_block": block}, "content_block_start"))
        out += [
            sse(
                {"type": "content_block_delta", "index": n, "delta": {"type": "input_json_delta", "partial_json": p}},
                "content_block_delta",
            )
            for p in ["", *fragments(call.arguments)]
        ]
        out.append(sse({"type": "content_block_stop", "index": n}, "content_block_stop"))
    delta = sse(
        {
            "type": "message_delta",
            "delta": {"stop_reason": reply.finish(FINISH), "stop_sequence": None},
            "usage": {"output_tokens": reply.output_tokens},
        },
        "message_delta",
    )
    return out, [delta, sse({"type": "message_stop"}, "message_stop")]
