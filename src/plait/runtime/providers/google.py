"""ModelRequest ⇄ Gemini generateContent JSON, buffered and streamed (`alt=sse`).

Gemini sends each function call whole, so a streamed call yields
`tool_call_start` without `tool_call_delta`s. Calls carry no id on Gemini 2.5;
we invent one for plait's bookkeeping and never send it back. A call's
`thoughtSignature` must be replayed on the same part or Gemini 3 rejects the turn.

Structured output is `responseMimeType: application/json` with `responseJsonSchema`.
Gemini before 3 rejects that beside function declarations, so an agent with tools
on those models is told the schema in its system instruction instead (the runtime
validates the answer either way).

A finish reason is passed on as Gemini sent it (UNEXPECTED_TOOL_CALL,
MODEL_ARMOR, ...); a blocked prompt reports its own `blockReason`.
"""

from __future__ import annotations

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
    ToolCall,
    ToolCallStart,
    Usage,
)
from .calls import SYNTHETIC_PREFIX, synthetic_id, tool_call
from .http import HTTPProvider, StreamState
from .sse import loads
from .structured import instruction

__all__ = ["GoogleProvider", "GoogleStream", "google_body", "parse_google"]

_MODES = {"auto": "AUTO", "none": "NONE", "required": "ANY"}
#: Models that take no response schema beside function declarations.
_NO_SCHEMA_WITH_TOOLS = re.compile(r"^(?:models/)?gemini-(?:1|2)(?:\.|-)")


class GoogleProvider(HTTPProvider):
    provider = "google"
    default_base_url = "https://generativelanguage.googleapis.com"

    def url(self, request: ModelRequest, stream: bool) -> str:
        method = "streamGenerateContent?alt=sse" if stream else "generateContent"
        return f"{self.base_url}/v1beta/models/{request.model}:{method}"

    def auth_headers(self, key: str) -> dict[str, str]:
        # The header, not `?key=`: a URL ends up in logs and error messages.
        return {"x-goog-api-key": key}

    def body(self, request: ModelRequest, stream: bool) -> dict[str, Any]:
        return google_body(request, temperature=self._temperature(request), max_tokens=self._max_tokens(request))

    def parse(self, data: Any, request: ModelRequest) -> ModelResponse:
        return parse_google(data, request)

    def stream_state(self, request: ModelRequest) -> StreamState:
        return GoogleStream(request)


def google_body(request: ModelRequest, *, temperature: float | None, max_tokens: int | None) -> dict[str, Any]:
    body: dict[str, Any] = {"contents": google_contents(request.messages)}
    system = [request.system] if request.system else []
    system += [m.text for m in request.messages if m.role == "system"]
    schema = request.output_schema
    told = schema is not None and (
        request.output_via == "told" or (bool(request.tools) and bool(_NO_SCHEMA_WITH_TOOLS.match(request.model)))
    )
    if told:
        system.append(instruction(schema))  # type: ignore[arg-type]
    if system:
        body["systemInstruction"] = {"parts": [{"text": text} for text in system]}
    if request.tools:
        # parametersJsonSchema takes the full JSON Schema plait compiles, not the OpenAPI subset.
        declarations = [
            {"name": t.name, "description": t.description, "parametersJsonSchema": t.parameters} for t in request.tools
        ]
        body["tools"] = [{"functionDeclarations": declarations}]
        if request.tool_choice:
            mode = _MODES.get(request.tool_choice)
            config = {"mode": mode} if mode else {"mode": "ANY", "allowedFunctionNames": [request.tool_choice]}
            body["toolConfig"] = {"functionCallingConfig": config}
    if request.hosted:
        body["tools"] = body.get("tools", []) + hosted.gemini_tools(request)
    generation: dict[str, Any] = {}
    if temperature is not None:
        generation["temperature"] = temperature
    if max_tokens is not None:
        generation["maxOutputTokens"] = max_tokens
    if schema is not None and not told:
        generation["responseMimeType"] = "application/json"
        generation["responseJsonSchema"] = schema
    if generation:
        body["generationConfig"] = generation
    return body


def google_contents(messages: list[Message]) -> list[dict[str, Any]]:
    names = {c.id: c.name for m in messages for c in m.tool_calls}
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "system":
            continue
        role = "model" if m.role == "assistant" else "user"
        parts = _parts(m, names)
        if out and out[-1]["role"] == role:
            # Parallel calls' responses must share one turn.
            out[-1]["parts"].extend(parts)
        else:
            out.append({"role": role, "parts": parts})
    return out


def _parts(m: Message, names: dict[str, str]) -> list[dict[str, Any]]:
    if m.role == "tool":
        response = {"error": m.text} if m.is_error else {"output": m.text}
        call: dict[str, Any] = {"name": m.name or names.get(m.tool_call_id or "", ""), "response": response}
        if m.tool_call_id and not m.tool_call_id.startswith(SYNTHETIC_PREFIX):
            call["id"] = m.tool_call_id
        return [{"functionResponse": call}]
    parts: list[dict[str, Any]] = [{"text": p.text} for p in m.content if p.text]
    for c in m.tool_calls:
        fn: dict[str, Any] = {"name": c.name, "args": c.arguments or {}}
        if not c.id.startswith(SYNTHETIC_PREFIX):
            fn["id"] = c.id
        part: dict[str, Any] = {"functionCall": fn}
        if c.signature:
            part["thoughtSignature"] = c.signature
        parts.append(part)
    return parts


def _read_parts(candidate: dict[str, Any]) -> tuple[list[str], list[ToolCall]]:
    texts, calls = [], []
    for part in (candidate.get("content") or {}).get("parts") or ():
        fn = part.get("functionCall") or part.get("function_call")
        if fn:
            signature = part.get("thoughtSignature") or part.get("thought_signature")
            calls.append(
                tool_call(fn.get("id") or synthetic_id(), fn.get("name") or "", fn.get("args") or {}, signature)
            )
        elif part.get("text") and not part.get("thought"):
            texts.append(part["text"])
    return texts, calls


def _reason(data: dict[str, Any], candidate: dict[str, Any]) -> str | None:
    if candidate.get("finishReason"):
        return candidate["finishReason"]
    # A blocked prompt has no candidates at all, only promptFeedback with its own reason
    # (SAFETY, PROHIBITED_CONTENT, BLOCKLIST, MODEL_ARMOR, ...): reported as it is.
    return (data.get("promptFeedback") or {}).get("blockReason") or None


def _usage(data: dict[str, Any]) -> Usage:
    meta = data.get("usageMetadata") or {}
    # Thinking tokens are billed as output.
    output = (meta.get("candidatesTokenCount") or 0) + (meta.get("thoughtsTokenCount") or 0)
    return Usage(meta.get("promptTokenCount") or 0, output)


def _response(
    data: dict[str, Any], request: ModelRequest, texts: list[str], calls: list[ToolCall], raw_reason: str | None
) -> ModelResponse:
    text = "".join(texts)
    return ModelResponse(
        message=Message("assistant", [TextPart(text)] if text else [], calls, model=request.model),
        finish_reason=finish.normalise(finish.GOOGLE, raw_reason, calls),
        raw_finish_reason=raw_reason,
        usage=_usage(data),
        model=data.get("modelVersion"),
        response_id=data.get("responseId"),
        raw=data,
        hosted=hosted.from_gemini((data.get("candidates") or [{}])[0], request) if request.hosted else None,
    )


def parse_google(data: Any, request: ModelRequest) -> ModelResponse:
    if isinstance(data, dict) and data.get("error"):
        raise errors.from_payload(data)
    if not isinstance(data, dict):
        raise ProviderError("server_error", f"reply is not a GenerateContentResponse: {str(data)[:200]}")
    candidate = (data.get("candidates") or [{}])[0]
    texts, calls = _read_parts(candidate)
    reason = _reason(data, candidate)
    if reason is None and not texts and not calls:
        # `{}`, or a candidate with neither parts nor a finishReason: no answer at all.
        raise ProviderError("server_error", f"reply has neither content nor a finishReason: {str(data)[:200]}")
    return _response(data, request, texts, calls, reason)


class GoogleStream:
    """alt=sse → events. Each event is a whole GenerateContentResponse chunk; usage is cumulative."""

    def __init__(self, request: ModelRequest) -> None:
        self.request = request
        self.texts: list[str] = []
        self.calls: list[ToolCall] = []
        self.raw_reason: str | None = None
        self.last: dict[str, Any] = {}
        #: Every part and the latest grounding, for what the request's hosted tools reported (providers/hosted.py).
        self.parts: list[Any] = []
        self.grounding: dict[str, Any] | None = None

    def feed(self, event: str | None, data: str) -> list[StreamEvent]:
        chunk = loads(data)
        if chunk.get("error"):
            raise errors.from_payload(chunk)
        self.last = chunk
        candidate = (chunk.get("candidates") or [{}])[0]
        if self.request.hosted:
            self.parts += (candidate.get("content") or {}).get("parts") or []
            self.grounding = candidate.get("groundingMetadata") or self.grounding
        texts, calls = _read_parts(candidate)
        self.texts += texts
        self.calls += calls
        self.raw_reason = _reason(chunk, candidate) or self.raw_reason
        out: list[StreamEvent] = [TextDelta(t) for t in texts]
        out += [ToolCallStart(c.id, c.name, c.arguments, self.request.step) for c in calls]
        return out

    def finish(self) -> list[StreamEvent]:
        if self.raw_reason is None:
            raise ProviderError("network", "stream ended before a finishReason")
        response = _response(self.last, self.request, self.texts, self.calls, self.raw_reason)
        if self.request.hosted:  # the whole stream's code runs and its grounding, not the last chunk's alone
            whole = {"content": {"parts": self.parts}, "groundingMetadata": self.grounding or {}}
            response.hosted = hosted.from_gemini(whole, self.request)
        return [ResponseDone(response)]
