"""ModelRequest ⇄ OpenAI Responses API JSON, with server-state continuation.

Between tool rounds a run can continue from the previous response by id
instead of resending the transcript. The agent loop decides when:

    request.previous_response_id = continuation_id(messages, model_as_recorded)

`continuation_id` returns None (send the full history) when the last assistant
turn came from another model or is older than OpenAI's retention. Given an
id, `responses_body` sends only the messages after the assistant message that
carries it; if no message carries it, the full history goes without the id.
"""

from __future__ import annotations

from typing import Any, Sequence

from . import errors, finish, hosted
from .base import (
    Message,
    ModelRequest,
    ModelResponse,
    ProviderError,
    ResponseDone,
    StreamEvent,
    TextDelta,
    TextPart,
    ToolCallDelta,
    ToolCallStart,
    Usage,
)
from .calls import CallBuffer, tool_call, wire_arguments
from .continuation import RETENTION as _RETENTION
from .continuation import continuation_id
from .sse import loads
from .structured import instruction, schema_name

__all__ = ["RETENTION", "ResponsesStream", "continuation_id", "parse_responses", "responses_body"]

#: How long OpenAI keeps a stored response (seconds); the gate itself is `continuation.continuation_id`.
RETENTION = _RETENTION["openai"]


def responses_body(
    request: ModelRequest, *, stream: bool, temperature: float | None, max_tokens: int | None
) -> dict[str, Any]:
    messages = request.messages
    body: dict[str, Any] = {"model": request.model}
    previous = request.previous_response_id
    if previous:
        anchor = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].response_id == previous), None)
        if anchor is not None:
            messages = messages[anchor + 1 :]
            body["previous_response_id"] = previous
    if request.system:
        # Instructions are not carried over by previous_response_id; they go every time.
        body["instructions"] = request.system
    body["input"] = responses_input(messages)
    if request.tools or request.hosted:
        body["tools"] = hosted.responses_tools(request) + [
            {
                "type": "function",
                "name": t.name,
                "description": t.description,
                "parameters": t.parameters,
                "strict": False,
            }
            for t in request.tools
        ]
        if request.tool_choice and request.tools:
            choice = request.tool_choice
            body["tool_choice"] = (
                choice if choice in ("auto", "none", "required") else {"type": "function", "name": choice}
            )
    if temperature is not None:
        body["temperature"] = temperature
    if max_tokens is not None:
        body["max_output_tokens"] = max_tokens
    if request.output_schema is not None and request.output_via == "told":
        told = instruction(request.output_schema)
        body["instructions"] = f"{body['instructions']}\n\n{told}" if body.get("instructions") else told
    elif request.output_schema is not None:
        fmt = {"type": "json_schema", "name": schema_name(request), "schema": request.output_schema, "strict": True}
        body["text"] = {"format": fmt}
    if stream:
        body["stream"] = True
    return body


def responses_input(messages: Sequence[Message]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "tool":
            items.append({"type": "function_call_output", "call_id": m.tool_call_id, "output": m.text})
        elif m.role == "assistant":
            for part in m.content:
                item: dict[str, Any] = {"role": "assistant", "content": part.text}
                if part.phase:
                    item["phase"] = part.phase
                items.append(item)
            items += [
                {"type": "function_call", "call_id": c.id, "name": c.name, "arguments": wire_arguments(c)}
                for c in m.tool_calls
            ]
        else:
            items.append({"role": "developer" if m.role == "system" else m.role, "content": m.text})
    return items


def parse_responses(data: dict[str, Any], request: ModelRequest) -> ModelResponse:
    status = data.get("status")
    if status == "failed" or (data.get("error") and status != "completed"):
        raise errors.from_payload({"error": data.get("error") or {"message": "response failed"}})
    if not status and not data.get("output"):
        # `{}`: a 200 that answers nothing. Retried, then fallback.
        raise ProviderError("server_error", f"reply has neither output nor a status: {str(data)[:200]}")
    parts: list[TextPart] = []
    calls = []
    for item in data.get("output") or ():
        kind = item.get("type")
        if kind == "message":
            for content in item.get("content") or ():
                text = content.get("text") if content.get("type") == "output_text" else content.get("refusal")
                if text:
                    parts.append(TextPart(text, item.get("phase")))
        elif kind == "function_call":
            calls.append(
                tool_call(item.get("call_id") or item.get("id"), item.get("name") or "", item.get("arguments"))
            )
    raw_reason = (data.get("incomplete_details") or {}).get("reason") if status == "incomplete" else status
    usage = data.get("usage") or {}
    return ModelResponse(
        message=Message(
            "assistant",
            parts,
            calls,
            model=request.model,
            response_id=data.get("id"),
            created_at=data.get("created_at"),
        ),
        finish_reason=finish.normalise(finish.OPENAI_RESPONSES, raw_reason, calls),
        raw_finish_reason=raw_reason,
        usage=Usage(usage.get("input_tokens") or 0, usage.get("output_tokens") or 0),
        model=data.get("model"),
        response_id=data.get("id"),
        raw=data,
        hosted=hosted.from_responses(data.get("output") or [], request) if request.hosted else None,
    )


_TERMINAL = ("response.completed", "response.incomplete", "response.failed")


class ResponsesStream:
    """Responses SSE → events; the terminal event's response is parsed by `parse_responses`, as buffered."""

    def __init__(self, request: ModelRequest) -> None:
        self.request = request
        self.calls: dict[str, CallBuffer] = {}
        self.phases: dict[int, str | None] = {}
        self.final: ModelResponse | None = None

    def feed(self, event: str | None, data: str) -> list[StreamEvent]:
        payload = loads(data)
        kind = payload.get("type") or event
        if kind in ("response.output_text.delta", "response.refusal.delta"):
            return [TextDelta(payload.get("delta") or "", self.phases.get(payload.get("output_index")))]
        if kind == "response.function_call_arguments.delta":
            buf = self.calls.get(payload.get("item_id"))
            fragment = payload.get("delta") or ""
            if buf is None or not fragment:
                return []
            buf.parts.append(fragment)
            return [ToolCallDelta(buf.id, fragment, self.request.step)]
        if kind == "response.output_item.added":
            item = payload.get("item") or {}
            if item.get("type") == "message":
                self.phases[payload.get("output_index")] = item.get("phase")
            elif item.get("type") == "function_call":
                self.calls[item.get("id") or ""] = CallBuffer(item.get("call_id") or item.get("id"), item.get("name"))
            return []
        if kind == "response.output_item.done":
            item = payload.get("item") or {}
            if item.get("type") != "function_call":
                return []
            call = tool_call(item.get("call_id") or item.get("id") or "", item.get("name") or "", item.get("arguments"))
            return [ToolCallStart(call.id, call.name, call.arguments, self.request.step)]
        if kind == "error":
            # The wire nests the error; the SDK's type declares it flat. Accept both.
            raise errors.from_payload(payload if isinstance(payload.get("error"), dict) else {"error": payload})
        if kind in _TERMINAL:
            self.final = parse_responses(payload.get("response") or {}, self.request)
        return []

    def finish(self) -> list[StreamEvent]:
        if self.final is None:
            raise ProviderError("network", "stream ended before response.completed")
        return [ResponseDone(self.final)]
