"""Reply → OpenAI Responses API JSON and SSE: the Response object's documented fields, the full event sequence.

The stream is what the openai SDK's `responses.stream()` accumulates from:
created, in_progress, then per item output_item.added, content_part.added,
output_text.delta (with content_index and logprobs), output_text.done,
content_part.done (function calls: function_call_arguments.delta and .done),
output_item.done, and a terminal response.completed or .incomplete (whose
cut-off item is `incomplete` too). An error is the `error` event with the error
nested as the API sends it (`error: {type, code, message, param}`, which the
SDK raises as APIError), then response.failed.
"""

from __future__ import annotations

import time
from typing import Any

from . import openai_chat
from .reply import Reply, fragments, sse, words

#: Neutral finish → (status, incomplete_details.reason).
FINISH = {"length": "max_output_tokens", "content_filter": "content_filter"}


def error(kind: str, message: str) -> tuple[int, dict[str, Any]]:
    status, payload = openai_chat.error(kind, message)
    if kind == "model_not_found":
        status = 400  # /v1/responses answers an unknown model with 400, unlike Chat
    return status, payload


def stream_error(
    kind: str, message: str, response_id: str = "resp_fake", model: str = "", after: int = 0
) -> list[bytes]:
    """The in-band failure after `after` events: numbered on from them, as one stream."""
    _, payload = openai_chat.error(kind, message)
    code = payload["error"]["code"]
    failed = {**_skeleton(response_id, model, {}), "status": "failed", "error": {"code": code, "message": message}}
    return [
        sse({"type": "error", "sequence_number": after, "error": payload["error"]}, "error"),
        sse({"type": "response.failed", "sequence_number": after + 1, "response": failed}, "response.failed"),
    ]


def _items(reply: Reply) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if reply.text:
        message: dict[str, Any] = {
            "id": "msg_fake",
            "type": "message",
            "status": "completed",
            "role": "assistant",
            "content": [_text_part(reply.text)],
        }
        if reply.phase:
            message["phase"] = reply.phase
        items.append(message)
    for n, call in enumerate(reply.calls):
        items.append(
            {
                "id": f"fc_fake{n}",
                "type": "function_call",
                "status": "completed",
                "call_id": call.id,
                "name": call.name,
                "arguments": call.arguments,
            }
        )
    return items


def _text_part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def _skeleton(response_id: str, model: str, request: dict[str, Any]) -> dict[str, Any]:
    """The documented Response fields, echoing what the request set, as the API does."""
    return {
        "id": response_id,
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "error": None,
        "incomplete_details": None,
        "instructions": request.get("instructions"),
        "max_output_tokens": request.get("max_output_tokens"),
        "model": model,
        "output": [],
        "parallel_tool_calls": request.get("parallel_tool_calls", True),
        "previous_response_id": request.get("previous_response_id"),
        "reasoning": {"effort": None, "summary": None},
        "store": request.get("store", True),
        "temperature": request.get("temperature", 1.0),
        "text": request.get("text") or {"format": {"type": "text"}},
        "tool_choice": request.get("tool_choice", "auto"),
        "tools": request.get("tools") or [],
        "top_p": request.get("top_p", 1.0),
        "truncation": request.get("truncation", "disabled"),
        "usage": None,
        "user": request.get("user"),
        "metadata": request.get("metadata") or {},
    }


def body(
    reply: Reply, model: str, response_id: str = "resp_fake", request: dict[str, Any] | None = None
) -> dict[str, Any]:
    reason = FINISH.get(reply.finish_reason or "")
    if reason is None and reply.finish_reason not in (None, "stop", "tool_calls", "malformed_tool_call"):
        reason = reply.finish_reason  # an unknown reason travels as an incomplete_details value
    output = _items(reply)
    if reason and output:  # the item the limit cut off says so, as the API's does
        output[-1]["status"] = "incomplete"
    return {
        **_skeleton(response_id, model, request or {}),
        "status": "incomplete" if reason else "completed",
        "incomplete_details": {"reason": reason} if reason else None,
        "output": output,
        "usage": {
            "input_tokens": reply.input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": reply.output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": reply.input_tokens + reply.output_tokens,
        },
    }


def events(
    reply: Reply, model: str, response_id: str = "resp_fake", request: dict[str, Any] | None = None
) -> tuple[list[bytes], list[bytes]]:
    final = body(reply, model, response_id, request)
    seq = iter(range(1_000_000))

    def ev(kind: str, **fields: Any) -> bytes:
        return sse({"type": kind, "sequence_number": next(seq), **fields}, kind)

    start = {**final, "status": "in_progress", "incomplete_details": None, "output": [], "usage": None}
    out = [ev("response.created", response=start), ev("response.in_progress", response=start)]
    for index, item in enumerate(final["output"]):
        where = {"item_id": item["id"], "output_index": index}
        if item["type"] == "message":
            opened = {**item, "status": "in_progress", "content": []}
            out.append(ev("response.output_item.added", output_index=index, item=opened))
            out.append(ev("response.content_part.added", **where, content_index=0, part=_text_part("")))
            out += [
                ev("response.output_text.delta", **where, content_index=0, delta=w, logprobs=[])
                for w in words(reply.text)
            ]
            out.append(ev("response.output_text.done", **where, content_index=0, text=reply.text, logprobs=[]))
            out.append(ev("response.content_part.done", **where, content_index=0, part=_text_part(reply.text)))
        else:
            opened = {**item, "status": "in_progress", "arguments": ""}
            out.append(ev("response.output_item.added", output_index=index, item=opened))
            out += [
                ev("response.function_call_arguments.delta", **where, delta=p) for p in fragments(item["arguments"])
            ]
            out.append(
                ev("response.function_call_arguments.done", **where, name=item["name"], arguments=item["arguments"])
            )
        out.append(ev("response.output_item.done", output_index=index, item=item))
    terminal = "response.incomplete" if final["status"] == "incomplete" else "response.completed"
    return out, [ev(terminal, response=final)]
