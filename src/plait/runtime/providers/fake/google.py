"""Reply → Gemini generateContent JSON and `alt=sse` chunks (\\r\\n\\r\\n separators, no terminator)."""

from __future__ import annotations

from typing import Any

from .reply import Reply, sse, words

FINISH = {
    "stop": "STOP",
    "length": "MAX_TOKENS",
    "tool_calls": "STOP",
    "content_filter": "SAFETY",
    "malformed_tool_call": "MALFORMED_FUNCTION_CALL",
}

#: kind → (status, error.status, details); invalid keys are a 400 with a reason, as the real API does.
ERRORS: dict[str, tuple[int, str, list[dict[str, Any]]]] = {
    "auth": (
        400,
        "INVALID_ARGUMENT",
        [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}],
    ),
    "model_not_found": (404, "NOT_FOUND", []),
    "rate_limit": (429, "RESOURCE_EXHAUSTED", []),
    "quota_exceeded": (
        429,
        "RESOURCE_EXHAUSTED",
        [
            {
                "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                "violations": [{"quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier"}],
            }
        ],
    ),
    "context_length": (400, "INVALID_ARGUMENT", []),
    "invalid_request": (400, "INVALID_ARGUMENT", []),
    "unsupported": (
        400,
        "INVALID_ARGUMENT",
        [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "UNSUPPORTED_VALUE"}],
    ),
    "content_filter": (
        400,
        "INVALID_ARGUMENT",
        [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "CONTENT_FILTER"}],
    ),
    "server_error": (503, "UNAVAILABLE", []),
    "timeout": (504, "DEADLINE_EXCEEDED", []),
}


def error(kind: str, message: str) -> tuple[int, dict[str, Any]]:
    status, name, details = ERRORS.get(kind, ERRORS["server_error"])
    if kind == "context_length":
        message = f"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576). {message}"
    payload: dict[str, Any] = {"code": status, "message": message, "status": name}
    if details:
        payload["details"] = details
    return status, {"error": payload}


def stream_error(kind: str, message: str) -> list[bytes]:
    return [sse(error(kind, message)[1], sep=b"\r\n\r\n")]


def _parts(reply: Reply, text: str) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = [{"text": text}] if text else []
    for n, call in enumerate(reply.calls):
        part: dict[str, Any] = {"functionCall": {"name": call.name, "args": call.parsed, "id": call.id}}
        if n == 0:
            part["thoughtSignature"] = "ZmFrZS1zaWduYXR1cmU="
        parts.append(part)
    return parts


def _chunk(reply: Reply, model: str, parts: list[dict[str, Any]], finish: str | None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return {
        "candidates": [candidate],
        "usageMetadata": {
            "promptTokenCount": reply.input_tokens,
            "candidatesTokenCount": reply.output_tokens,
            "totalTokenCount": reply.input_tokens + reply.output_tokens,
        },
        "modelVersion": model,
        "responseId": "fake-response",
    }


def body(reply: Reply, model: str) -> dict[str, Any]:
    return _chunk(reply, model, _parts(reply, reply.text), reply.finish(FINISH))


def events(reply: Reply, model: str) -> tuple[list[bytes], list[bytes]]:
    pieces = words(reply.text)
    # Gemini has no terminator: the last chunk carries the calls (whole) and the finishReason.
    out = [sse(_chunk(reply, model, [{"text": p}], None), sep=b"\r\n\r\n") for p in pieces[:-1]]
    last = _parts(reply, pieces[-1] if pieces else "")
    return out, [sse(_chunk(reply, model, last, reply.finish(FINISH)), sep=b"\r\n\r\n")]
