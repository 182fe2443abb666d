"""ModelRequest ⇄ Anthropic Messages JSON, buffered and streamed.

Tool results go back inside the next *user* turn as `tool_result` blocks, so
consecutive tool and user messages are merged into one user turn.

Structured output is `output_config.format` (json_schema). Models older than the
4.5 generation lack it; they are given a final-answer tool instead (forced when
the agent has no tools of its own or chose `none`, `any` when it has, the tool its
`tool_choice` names when it names one), and a call of that tool
comes back as the answer's text, so the rest of plait sees one shape.
"""

from __future__ import annotations

import json
import re
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
    Usage,
)
from .calls import CallBuffer, tool_call
from .http import HTTPProvider, StreamState
from .sse import loads
from .structured import instruction, output_tool_name

__all__ = ["AnthropicProvider", "AnthropicStream", "anthropic_body", "parse_anthropic"]

API_VERSION = "2023-06-01"
#: Messages requires max_tokens; this fits every current model's output limit.
DEFAULT_MAX_TOKENS = 4096
_CHOICE = {"auto": {"type": "auto"}, "required": {"type": "any"}, "none": {"type": "none"}}
#: Claude models without `output_config.format` (before the 4.5 generation); any other id is asked natively.
_NO_NATIVE_OUTPUT = re.compile(r"^claude-(?:instant|[23](?:[-.]|$)|(?:opus|sonnet)-4(?:$|-0|-1|-2025))")


def answer_tool(request: ModelRequest) -> str | None:
    """The final-answer tool's name when this request's output schema goes through one, else None."""
    if request.output_schema is None or request.output_via == "told":
        return None
    if request.output_via == "native" and not _NO_NATIVE_OUTPUT.match(request.model):
        return None
    return output_tool_name(request)


class AnthropicProvider(HTTPProvider):
    provider = "anthropic"
    default_base_url = "https://api.anthropic.com"

    def url(self, request: ModelRequest, stream: bool) -> str:
        return f"{self.base_url}/v1/messages"

    def auth_headers(self, key: str) -> dict[str, str]:
        return {"x-api-key": key, "anthropic-version": API_VERSION}

    def body(self, request: ModelRequest, stream: bool) -> dict[str, Any]:
        return anthropic_body(
            request, stream=stream, temperature=self._temperature(request), max_tokens=self._max_tokens(request)
        )

    def parse(self, data: Any, request: ModelRequest) -> ModelResponse:
        return parse_anthropic(data, request)

    def stream_state(self, request: ModelRequest) -> StreamState:
        return AnthropicStream(request)


def anthropic_body(
    request: ModelRequest, *, stream: bool, temperature: float | None, max_tokens: int | None
) -> dict[str, Any]:
    system = [request.system] if request.system else []
    system += [m.text for m in request.messages if m.role == "system"]
    body: dict[str, Any] = {
        "model": request.model,
        "max_tokens": max_tokens or DEFAULT_MAX_TOKENS,
        "messages": anthropic_messages(request.messages),
    }
    if system:
        body["system"] = "\n\n".join(system)
    if request.tools or request.hosted:
        body["tools"] = hosted.anthropic_tools(request) + [
            {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in request.tools
        ]
        if request.tool_choice and request.tools:
            body["tool_choice"] = _CHOICE.get(request.tool_choice) or {"type": "tool", "name": request.tool_choice}
    if request.output_schema is not None:
        _ask_output(body, request)
    if temperature is not None:
        body["temperature"] = temperature
    if stream:
        body["stream"] = True
    return body


def _ask_output(body: dict[str, Any], request: ModelRequest) -> None:
    if request.output_via == "told":
        told = instruction(request.output_schema)  # type: ignore[arg-type]
        body["system"] = f"{body['system']}\n\n{told}" if body.get("system") else told
        return
    tool = answer_tool(request)
    if tool is None:
        body["output_config"] = {"format": {"type": "json_schema", "schema": request.output_schema}}
        return
    description = "Give your final answer. Call this exactly once, when you are done, instead of replying in text."
    body.setdefault("tools", []).append(
        {"name": tool, "description": description, "input_schema": request.output_schema}
    )
    # The answer comes as a call, so a tool is always chosen: `any` keeps the agent's own tools callable; with none
    # (or `tool_choice = none`) the answer tool is the only call there is; a tool the agent's choice names is forced.
    choice = request.tool_choice if request.tools else None
    if choice == "none" or not request.tools:
        body["tool_choice"] = {"type": "tool", "name": tool}
    elif choice in (None, "auto", "required"):
        body["tool_choice"] = {"type": "any"}
    else:
        body["tool_choice"] = {"type": "tool", "name": choice}


def anthropic_messages(messages: list[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "system":
            continue
        role = "assistant" if m.role == "assistant" else "user"
        blocks = _blocks(m)
        if out and out[-1]["role"] == role:
            previous = out[-1]
            if isinstance(previous["content"], str):
                previous["content"] = [{"type": "text", "text": previous["content"]}]
            previous["content"].extend(blocks)
        elif m.role == "user":
            out.append({"role": "user", "content": m.text})
        else:
            out.append({"role": role, "content": blocks})
    return out


def _blocks(m: Message) -> list[dict[str, Any]]:
    if m.role == "tool":
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.text}
        if m.is_error:
            block["is_error"] = True
        return [block]
    blocks: list[dict[str, Any]] = [{"type": "text", "text": p.text} for p in m.content if p.text]
    # A malformed call is replayed with empty input: `input` must be an object.
    blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments or {}} for c in m.tool_calls]
    return blocks


def parse_anthropic(data: dict[str, Any], request: ModelRequest) -> ModelResponse:
    if data.get("type") == "error":
        raise errors.from_payload(data)
    if not data.get("content") and not data.get("stop_reason"):
        # A 200 with neither content nor a stop reason (`{}`) is no answer at all: retried, then fallback.
        raise ProviderError("server_error", f"reply has neither content nor a stop_reason: {str(data)[:200]}")
    parts: list[TextPart] = []
    calls = []
    tool = answer_tool(request)
    answered = False
    for block in data.get("content") or ():
        if block.get("type") == "text" and block.get("text"):
            parts.append(TextPart(block["text"]))
        elif block.get("type") == "tool_use" and tool is not None and block.get("name") == tool:
            parts.append(TextPart(json.dumps(block.get("input") or {}, ensure_ascii=False)))
            answered = True
        elif block.get("type") == "tool_use":
            calls.append(tool_call(block.get("id") or "", block.get("name") or "", block.get("input")))
    raw_reason = data.get("stop_reason")
    return ModelResponse(
        message=Message("assistant", parts, calls, model=request.model),
        finish_reason=_finish(raw_reason, calls, answered),
        raw_finish_reason=raw_reason,
        usage=_usage(data.get("usage") or {}),
        model=data.get("model"),
        response_id=data.get("id"),
        raw=data,
        hosted=hosted.from_anthropic(data.get("content") or [], request) if request.hosted else None,
    )


def _finish(raw_reason: str | None, calls: list[Any], answered: bool) -> str:
    if answered and not calls and raw_reason == "tool_use":
        return "stop"  # the answer tool was the only call: the answer is complete
    return finish.normalise(finish.ANTHROPIC, raw_reason, calls)


def _usage(usage: dict[str, Any]) -> Usage:
    # `input_tokens` excludes cached tokens; the prompt's real size is the sum.
    prompt = sum(usage.get(k) or 0 for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
    return Usage(prompt, usage.get("output_tokens") or 0)


class AnthropicStream:
    """Messages SSE → events. `partial_json` is concatenated per block index and parsed at block stop."""

    def __init__(self, request: ModelRequest) -> None:
        self.request = request
        self.blocks: dict[int, CallBuffer | list[str]] = {}
        self.message: dict[str, Any] = {}
        self.usage: dict[str, Any] = {}
        self.raw_reason: str | None = None
        self.done = False
        #: The final-answer tool (legacy structured output): its arguments stream as the answer's text.
        self.answer_tool = answer_tool(request)
        #: Hosted tools' blocks as they would be in a whole reply (server_tool_use, text citations), by index.
        self.hosted: dict[int, dict[str, Any]] = {}

    def feed(self, event: str | None, data: str) -> list[StreamEvent]:
        payload = loads(data)
        kind = payload.get("type") or event
        if kind == "content_block_delta":
            delta = payload.get("delta") or {}
            block = self.blocks.get(payload.get("index"))
            if delta.get("type") == "text_delta" and isinstance(block, list):
                block.append(delta.get("text") or "")
                return [TextDelta(delta.get("text") or "")]
            served = self.hosted.get(payload.get("index")) if self.request.hosted else None
            if served is not None:  # a server tool's query, or a citation of the text (providers/hosted.py)
                if delta.get("type") == "input_json_delta":
                    served["partial"] = served.get("partial", "") + (delta.get("partial_json") or "")
                elif delta.get("type") == "citations_delta" and isinstance(delta.get("citation"), dict):
                    served.setdefault("citations", []).append(delta["citation"])
            if delta.get("type") == "input_json_delta" and isinstance(block, CallBuffer):
                fragment = delta.get("partial_json") or ""
                if fragment:
                    block.parts.append(fragment)
                    if block.name == self.answer_tool:
                        return [TextDelta(fragment)]
                    return [ToolCallDelta(block.id, fragment, self.request.step)]
            return []
        if kind == "content_block_start":
            started = payload.get("content_block") or {}
            if started.get("type") == "tool_use":
                self.blocks[payload.get("index")] = CallBuffer(started.get("id"), started.get("name"))
            elif started.get("type") == "text":
                self.blocks[payload.get("index")] = [started.get("text") or ""]
            if self.request.hosted and started.get("type") in ("server_tool_use", "text"):
                self.hosted[payload.get("index")] = dict(started)
            return []
        if kind == "content_block_stop":
            block = self.blocks.get(payload.get("index"))
            if isinstance(block, CallBuffer) and block.name != self.answer_tool:
                call = block.call()
                return [ToolCallStart(call.id, call.name, call.arguments, self.request.step)]
            return []
        if kind == "message_start":
            self.message = payload.get("message") or {}
            self.usage.update(self.message.get("usage") or {})
        elif kind == "message_delta":
            self.raw_reason = (payload.get("delta") or {}).get("stop_reason") or self.raw_reason
            self.usage.update(payload.get("usage") or {})  # cumulative, so the latest wins
        elif kind == "message_stop":
            self.done = True
        elif kind == "error":
            raise errors.from_payload(payload)
        return []

    def finish(self) -> list[StreamEvent]:
        if not self.done:
            raise ProviderError("network", "stream ended before message_stop")
        parts, calls = [], []
        answered = False
        for index in sorted(self.blocks):
            block = self.blocks[index]
            if isinstance(block, CallBuffer) and block.name == self.answer_tool:
                parts.append(TextPart("".join(block.parts)))
                answered = True
            elif isinstance(block, CallBuffer):
                calls.append(block.call())
            elif "".join(block):
                parts.append(TextPart("".join(block)))
        response = ModelResponse(
            message=Message("assistant", parts, calls, model=self.request.model),
            finish_reason=_finish(self.raw_reason, calls, answered),
            raw_finish_reason=self.raw_reason,
            usage=_usage(self.usage),
            model=self.message.get("model"),
            response_id=self.message.get("id"),
            hosted=hosted.from_anthropic(self._hosted_blocks(), self.request) if self.request.hosted else None,
        )
        return [ResponseDone(response)]

    def _hosted_blocks(self) -> list[dict[str, Any]]:
        """The streamed server-tool and text blocks as a whole reply has them (their input parsed)."""
        blocks = []
        for index in sorted(self.hosted):
            block = dict(self.hosted[index])
            partial = block.pop("partial", "")
            if partial:
                try:
                    block["input"] = json.loads(partial)
                except ValueError:
                    block["input"] = {}
            blocks.append(block)
        return blocks
