"""ModelRequest ⇄ OpenAI Chat Completions JSON (also what OpenAI-compatible servers speak).

Compatible servers bend the format (tool id "0", id and name repeated on every
fragment, no finish_reason, arguments sent as an object, errors at the top
level), so the parsers merge fields defensively: the first id for an index
wins, names fill in once, unknown keys are ignored.
"""

from __future__ import annotations

import json
from typing import Any

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
    ToolSpec,
    Usage,
)
from .calls import CallBuffer, synthetic_id, tool_call, wire_arguments
from .sse import is_done, loads
from .structured import schema_name, tell_chat

__all__ = [
    "ChatStream",
    "chat_body",
    "chat_messages",
    "chat_response_format",
    "chat_tool_choice",
    "chat_tools",
    "parse_chat",
]


def chat_body(
    request: ModelRequest,
    *,
    stream: bool,
    temperature: float | None,
    max_tokens: int | None,
    max_tokens_field: str = "max_tokens",
) -> dict[str, Any]:
    body: dict[str, Any] = {"model": request.model, "messages": chat_messages(request)}
    if request.tools:
        body["tools"] = chat_tools(request.tools)
        if request.tool_choice:
            body["tool_choice"] = chat_tool_choice(request.tool_choice)
    if request.hosted:
        search = hosted.chat_options(request)
        if search is not None:
            body["web_search_options"] = search
    if temperature is not None:
        body["temperature"] = temperature
    if max_tokens is not None:
        body[max_tokens_field] = max_tokens
    if request.output_schema is not None:
        if request.output_via == "told":
            tell_chat(body["messages"], request.output_schema)
        else:
            body["response_format"] = chat_response_format(request)
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body


def chat_response_format(request: ModelRequest) -> dict[str, Any]:
    """Structured output: the schema as strict json_schema (plait's output schemas are written strict)."""
    schema = {"name": schema_name(request), "schema": request.output_schema, "strict": True}
    return {"type": "json_schema", "json_schema": schema}


def chat_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    # strict=False: plait schemas have optional parameters, which strict mode rejects.
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.parameters, "strict": False},
        }
        for t in tools
    ]


def chat_tool_choice(choice: str) -> Any:
    if choice in ("auto", "none", "required"):
        return choice
    return {"type": "function", "function": {"name": choice}}


def chat_messages(request: ModelRequest) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if request.system:
        out.append({"role": "system", "content": request.system})
    for m in request.messages:
        if m.role == "assistant":
            item: dict[str, Any] = {"role": "assistant"}
            if m.content or not m.tool_calls:
                item["content"] = m.text
            if m.tool_calls:
                item["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": wire_arguments(c)},
                    }
                    for c in m.tool_calls
                ]
            out.append(item)
        elif m.role == "tool":
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.text})
        else:
            out.append({"role": m.role, "content": m.text})
    return out


def parse_chat(data: dict[str, Any], request: ModelRequest) -> ModelResponse:
    if data.get("error"):
        raise errors.from_payload(data)
    choices = data.get("choices") or [{}]
    choice = min(choices, key=_index) if len(choices) > 1 else choices[0]
    message = choice.get("message") or {}
    if not message and not choice.get("finish_reason"):
        # `{}` or an empty choice: a 200 that answers nothing. Retried, then fallback.
        raise ProviderError("server_error", f"reply has neither a message nor a finish_reason: {str(data)[:200]}")
    text = message.get("content")
    if isinstance(text, list):  # some compatible servers return content parts
        text = "".join(p.get("text", "") for p in text if isinstance(p, dict))
    text = text or message.get("refusal") or ""
    calls = []
    for raw in message.get("tool_calls") or ():
        fn = raw.get("function") or {}
        calls.append(tool_call(raw.get("id") or synthetic_id(), fn.get("name") or "", fn.get("arguments")))
    raw_reason = choice.get("finish_reason")
    return ModelResponse(
        message=Message(
            "assistant", [TextPart(text)] if text else [], calls, model=request.model, created_at=data.get("created")
        ),
        finish_reason=finish.normalise(finish.OPENAI_CHAT, raw_reason, calls),
        raw_finish_reason=raw_reason,
        usage=_usage(data.get("usage")),
        model=data.get("model"),
        response_id=data.get("id"),
        raw=data,
        hosted=hosted.from_chat(message, request) if request.hosted else None,
    )


def _index(choice: dict[str, Any]) -> int:
    index = choice.get("index")
    return index if isinstance(index, int) else 0


def _usage(usage: Any) -> Usage:
    if not isinstance(usage, dict):
        return Usage()
    return Usage(usage.get("prompt_tokens") or 0, usage.get("completion_tokens") or 0)


class ChatStream:
    """Chat Completions SSE → events. Calls are accumulated by `index`, never by arrival order.

    Only one choice is read (the first index seen, 0 when plait asked): a server that
    sends several (`n` > 1) must not have them spliced into one answer.
    """

    def __init__(self, request: ModelRequest) -> None:
        self.request = request
        self.text: list[str] = []
        self.calls: dict[int, CallBuffer] = {}
        self.raw_reason: str | None = None
        self.usage = Usage()
        self.done = False
        self.meta: dict[str, Any] = {}
        self.choice: int | None = None
        #: `url_citation` annotations a search model's deltas carry (providers/hosted.py reads them at the end).
        self.annotations: list[Any] = []

    def feed(self, event: str | None, data: str) -> list[StreamEvent]:
        if data[:1] != "{" and is_done(data):
            self.done = True
            return []
        chunk = loads(data)
        if chunk.get("error"):
            raise errors.from_payload(chunk)
        if not self.meta:
            self.meta = {"id": chunk.get("id"), "model": chunk.get("model"), "created": chunk.get("created")}
        if chunk.get("usage"):
            self.usage = _usage(chunk["usage"])
        out: list[StreamEvent] = []
        for choice in chunk.get("choices") or ():
            index = _index(choice)
            if self.choice is None:
                self.choice = index
            elif index != self.choice:
                continue
            delta = choice.get("delta") or {}
            # A refusal is the model's answer too; the buffered path reads it the same way.
            content = delta.get("content") or delta.get("refusal")
            if content:
                self.text.append(content)
                out.append(TextDelta(content))
            for fragment in delta.get("tool_calls") or ():
                self._fragment(fragment, out)
            if delta.get("annotations"):
                self.annotations += delta["annotations"]
            if choice.get("finish_reason"):
                self.raw_reason = choice["finish_reason"]
        return out

    def _fragment(self, fragment: dict[str, Any], out: list[StreamEvent]) -> None:
        index = fragment.get("index")
        fn = fragment.get("function") or {}
        if index is None:  # servers that omit the index send each call whole, keyed by id
            index = next((i for i, b in self.calls.items() if b.id == fragment.get("id")), len(self.calls))
        buf = self.calls.get(index)
        if buf is None:
            buf = self.calls[index] = CallBuffer(fragment.get("id"), fn.get("name"))
        elif not buf.name and fn.get("name"):
            buf.name = fn["name"]
        arguments = fn.get("arguments")
        if isinstance(arguments, dict):
            arguments = json.dumps(arguments)
        if arguments:
            buf.parts.append(arguments)
            out.append(ToolCallDelta(buf.id, arguments, self.request.step))

    def finish(self) -> list[StreamEvent]:
        if not self.done and self.raw_reason is None:
            raise ProviderError("network", "stream ended before its finish_reason or [DONE]")
        calls = [self.calls[i].call() for i in sorted(self.calls)]
        text = "".join(self.text)
        response = ModelResponse(
            message=Message(
                "assistant",
                [TextPart(text)] if text else [],
                calls,
                model=self.request.model,
                created_at=self.meta.get("created"),
            ),
            finish_reason=finish.normalise(finish.OPENAI_CHAT, self.raw_reason, calls),
            raw_finish_reason=self.raw_reason,
            usage=self.usage,
            model=self.meta.get("model"),
            response_id=self.meta.get("id"),
            hosted=hosted.from_chat({"content": text, "annotations": self.annotations}, self.request)
            if self.request.hosted
            else None,
        )
        # Chat marks no per-call end, so every call starts once the turn is complete.
        starts: list[StreamEvent] = [ToolCallStart(c.id, c.name, c.arguments, self.request.step) for c in calls]
        return [*starts, ResponseDone(response)]
