"""A scripted reply (the scripted provider's JSON shape plus server knobs) → a normalised Reply.

Reply shape, as in LANGUAGE.md "The scripted provider": `text`, `output` (a
structured answer, sent as its JSON text where the wire puts structured output,
or as a call of the answer tool a request forced), `tool_calls` (`name` with
`arguments` or `raw_arguments`), `finish_reason`, `phase`, `delay`,
`error: {kind, message}`. Server-only knobs:

    status        HTTP status to answer with (an error body is built unless the reply has text)
    headers       extra response headers, e.g. {"retry-after": "0"}
    chunk_delay   pause between stream events ("5ms")
    stream_error  {kind, message, after: N}: in-band error after N events of a streamed reply
    drop          true: close the connection without answering; N: mid-stream, after N events
    truncate      true or N: end a stream cleanly after N events (default: all but the terminator)
    usage         {"input_tokens": .., "output_tokens": ..}
    body          a JSON value sent as the whole 200 reply instead of the wire's own (`{}`, hostile shapes)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from ..scripted import parse_duration, words

__all__ = ["Call", "Reply", "fragments", "sse", "words"]


def _seconds(value: Any) -> float:
    """0.05, "50ms" or "1.5s" as the scripted provider reads them; absent is no wait."""
    return 0.0 if value is None else parse_duration(value)


@dataclass(slots=True)
class Call:
    id: str
    name: str
    #: The argument text exactly as the server will send it (may be malformed on purpose).
    arguments: str

    @property
    def parsed(self) -> Any:
        try:
            return json.loads(self.arguments) if self.arguments.strip() else {}
        except ValueError:
            return {}


@dataclass(slots=True)
class Reply:
    text: str = ""
    calls: list[Call] = field(default_factory=list)
    finish_reason: str | None = None
    phase: str | None = None
    delay: float = 0.0
    chunk_delay: float = 0.0
    error: dict[str, Any] | None = None
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    stream_error: dict[str, Any] | None = None
    drop: bool | int = False
    truncate: bool | int = False
    input_tokens: int = 10
    output_tokens: int = 5
    #: The structured answer, when the script gave one (`text` then holds its JSON).
    output: Any = None
    #: Sent verbatim as the reply body (buffered requests), when given.
    body: Any = None

    @classmethod
    def from_json(cls, data: dict[str, Any], index: int = 0) -> "Reply":
        if not isinstance(data, dict):
            raise ValueError(f"reply {index}: expected an object, got {type(data).__name__}")
        calls = []
        for n, raw in enumerate(data.get("tool_calls") or ()):
            if "raw_arguments" in raw:
                arguments = raw["raw_arguments"]
            else:
                arguments = json.dumps(raw.get("arguments") or {})
            calls.append(Call(raw.get("id") or f"call_{index}_{n}", raw["name"], arguments))
        usage = data.get("usage") or {}
        text = data.get("text") or ""
        if "output" in data and not text:
            text = json.dumps(data["output"], ensure_ascii=False)
        return cls(
            text=text,
            output=data.get("output"),
            body=data.get("body"),
            calls=calls,
            finish_reason=data.get("finish_reason"),
            phase=data.get("phase"),
            delay=_seconds(data.get("delay")),
            chunk_delay=_seconds(data.get("chunk_delay")),
            error=data.get("error"),
            status=data.get("status"),
            headers={str(k): str(v) for k, v in (data.get("headers") or {}).items()},
            stream_error=data.get("stream_error"),
            drop=data.get("drop", False),
            truncate=data.get("truncate", False),
            input_tokens=usage.get("input_tokens", 10),
            output_tokens=usage.get("output_tokens", max(1, len(text) // 4)),
        )

    def through_tool(self, name: str) -> "Reply":
        """This structured answer as a call of the tool `name` (a request that forced an answer tool)."""
        call = Call(f"toolu_fake_{name}", name, json.dumps(self.output, ensure_ascii=False))
        return replace(self, text="", calls=[*self.calls, call], output=None)

    def failure(self, streamed: bool) -> dict[str, Any] | None:
        """The error to answer with instead of a reply, if any.

        A mid-stream error asked of a buffered request fails the whole request;
        a bare error status without text gets the wire's usual error body.
        """
        if self.error is not None:
            return self.error
        if self.stream_error is not None and not streamed:
            return self.stream_error
        if self.status is not None and self.status >= 400 and not self.text:
            return {}
        return None

    def finish(self, table: dict[str, str]) -> str:
        """This reply's finish reason in a wire's own vocabulary; unknown values go out as given."""
        neutral = self.finish_reason or ("tool_calls" if self.calls else "stop")
        return table.get(neutral, neutral)


def fragments(text: str, size: int = 8) -> list[str]:
    """Argument text in small pieces, the way OpenAI and Anthropic stream it."""
    return [text[i : i + size] for i in range(0, len(text), size)]


def sse(data: Any, event: str | None = None, sep: bytes = b"\n\n") -> bytes:
    line = b"data: " + json.dumps(data, separators=(",", ":")).encode()
    if event:
        line = b"event: " + event.encode() + b"\n" + line
    return line + sep
