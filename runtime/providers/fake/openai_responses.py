"""Reply → OpenAI Responses API JSON and SSE (event lines, sequence numbers, terminal event)."""

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


def stream_error(kind: str, message: str) -> list[bytes]:
    _, payload = openai_chat.error(kind, message)
    failed = {"id": "resp_fake", "object": "response", "status": "failed", "output": [],
              "error": {"code": payload["error"]["code"], "message": message}}
    return [
        sse({"type": "error", "sequence_number": 0, "error": payload["error"]}, "error"),
        sse({"type": "response.failed", "sequence_number": 1, "response": failed}, "response.failed"),
    ]


def _items(reply: Reply) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if reply.text:
        message: dict[str, Any] = {"id": "msg_fake", "type": "message", "status": "completed", "role": "assistant",
                                   "content": [{"type": "output_text", "text": reply.text, "annotations": []}]}
        if reply.phase:
            message["phase"] = reply.phase
        items.append(message)
    for n, call in enumerate(reply.calls):
        items.append({"id": f"fc_fake{n}", "type": "function_call", "status": "completed", "call_id": call.id,
                      "name": call.name, "arguments": call.arguments})
    return items


def body(reply: Reply, model: str, response_id: str = "resp_fake") -> dict[str, Any]:
    reason = FINISH.get(reply.finish_reason or "")
    if reason is None and reply.finish_reason not in (None, "stop", "tool_calls", "malformed_tool_call"):
        reason = reply.finish_reason  # an unknown reason travels as an incomplete_details value
    return {
        "id": response_id,
        "object": "response",
        "created_at": int(time.time()),
        "model": model,
        "status": "incomplete" if reason else "completed",
        "incomplete_details": {"reason": reason} if reason else None,
        "output": _items(reply),
        "usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens,
                  "total_tokens": reply.input_tokens + reply.output_tokens},
    }


def events(reply: Reply, model: str, response_id: str = "resp_fake") -> tuple[list[bytes], list[bytes]]:
    final = body(reply, model, response_id)
    seq = iter(range(1_000_000))

    def ev(kind: str, **fields: Any) -> bytes:
        return sse({"type": kind, "sequence_number": next(seq), **fields}, kind)

    start = {**final, "status": "in_progress", "output": [], "usage": None}
    out = [ev("response.created", response=start), ev("response.in_progress", response=start)]
    for index, item in enumerate(final["output"]):
        if item["type"] == "message":
            opened = {**item, "status": "in_progress", "content": []}
            out.append(ev("response.output_item.added", output_index=index, item=opened))
            out += [ev("response.output_text.delta", item_id=item["id"], output_index=index, content_index=0, delta=w)
                    for w in words(reply.text)]
            out.append(ev("response.output_text.done", item_id=item["id"], output_index=index, text=reply.text))
        else:
            opened = {**item, "status": "in_progress", "arguments": ""}
            out.append(ev("response.output_item.added", output_index=index, item=opened))
            out += [ev("response.function_call_arguments.delta", item_id=item["id"], output_index=index, delta=p)
                    for p in fragments(item["arguments"])]
        out.append(ev("response.output_item.done", output_index=index, item=item))
    terminal = "response.incomplete" if final["status"] == "incomplete" else "response.completed"
    return out, [ev(terminal, response=final)]
