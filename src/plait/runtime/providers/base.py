"""Provider seam: a `ModelRequest` → a `ModelResponse` or stream events, the types every provider speaks.

A provider turns a `ModelRequest` into a `ModelResponse` (buffered) or an async
iterator of `StreamEvent`s ending in `ResponseDone` (streamed). Everything a
provider can fail with is translated at its boundary into `ProviderError`, whose
`kind` is one of `ERROR_KINDS`. The runtime never sees httpx or wire JSON.

These are slotted dataclasses rather than pydantic models: they are built on
every model call, and the runtime's per-round overhead budget is microseconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Literal, Protocol, runtime_checkable

# One list for every stage: the compiler checks `fallback_on` against these, providers map failures onto them.
from plait.core.vocab import ERROR_KINDS, FALLBACK_KINDS

from ..secret_values import mask

__all__ = [
    "ERROR_KINDS",
    "FALLBACK_KINDS",
    "Message",
    "ModelRequest",
    "ModelResponse",
    "Provider",
    "ProviderError",
    "ResponseDone",
    "StreamEvent",
    "TextDelta",
    "TextPart",
    "ToolCall",
    "ToolCallDelta",
    "ToolCallStart",
    "ToolSpec",
    "Usage",
    "final_answer_text",
]

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(slots=True)
class TextPart:
    text: str
    #: "commentary", "final_answer" or None; an open set (see final_answer_text).
    phase: str | None = None


@dataclass(slots=True)
class ToolCall:
    id: str
    name: str
    #: Parsed arguments; None when `raw_arguments` did not parse (then `malformed` is True).
    arguments: dict[str, Any] | None
    raw_arguments: str = ""
    malformed: bool = False
    #: Opaque provider token that must be sent back with the call (Gemini `thoughtSignature`).
    signature: str | None = None


@dataclass(slots=True)
class Message:
    role: Role
    content: list[TextPart] = field(default_factory=list)
    #: On assistant messages: the calls the model asked for.
    tool_calls: list[ToolCall] = field(default_factory=list)
    #: On tool messages: which call this answers, the tool's name, and whether it failed.
    tool_call_id: str | None = None
    name: str | None = None
    is_error: bool = False
    #: Which model actually produced an assistant message (fallbacks make this matter).
    model: str | None = None
    #: Provider server-state handle (OpenAI Responses `previous_response_id`).
    response_id: str | None = None
    #: When the provider produced it (unix seconds); server state expires, so continuation needs it.
    created_at: float | None = None

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.content)

    @classmethod
    def user(cls, text: str) -> "Message":
        return cls("user", [TextPart(text)])

    @classmethod
    def system(cls, text: str) -> "Message":
        return cls("system", [TextPart(text)])


@dataclass(slots=True)
class ToolSpec:
    name: str
    description: str
    #: JSON Schema of the arguments object.
    parameters: dict[str, Any]


@dataclass(slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens)


#: How a model is asked for a declared `output` (ModelRequest.output_via).
OutputVia = Literal["native", "tool", "told"]


@dataclass(slots=True)
class ModelRequest:
    #: The provider's own model id ("gpt-4o-mini"), not the plait model name.
    model: str
    messages: list[Message]
    tools: list[ToolSpec] = field(default_factory=list)
    #: "auto" | "none" | "required" | a tool name.
    tool_choice: str | None = None
    system: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    #: Seconds for this one call; None means the provider's default.
    timeout: float | None = None
    #: Who is asking, for scripted replies keyed by agent and for error messages.
    agent: str | None = None
    #: Where in the run it asks (the runnable's graph path, e.g. ("main", "each", "[2]", "item")): scripted
    #: replies keyed by path, so calls running side by side each read their own list whatever the timing.
    path: tuple[str, ...] = ()
    #: Server-state continuation (OpenAI Responses): continue from this response id.
    previous_response_id: str | None = None
    #: 1-based step number within the agent's run, for tool_call_delta correlation.
    step: int = 0
    #: JSON Schema the final answer must match (a declared `output`), asked of the provider natively;
    #: None for plain text. Tool-calling turns are unaffected: only the answer is constrained.
    output_schema: dict[str, Any] | None = None
    #: How the serving model is asked for `output_schema`, from its catalogue entry (set per model by the one
    #: place that fills a request's settings): "native" (the wire's own structured output, or the wire's own
    #: stand-in for ids it knows lack one), "tool" (a forced answer tool) or "told" (the schema in the system
    #: message, for a model that says it has no structured output). The reply is validated either way.
    output_via: OutputVia = "native"
    #: The hosted tools to ask the provider to run (each a tool's `run`: `{"hosted": "web_search", "options":
    #: {...}}`): sent as the wire's own tools by src/plait/runtime/providers/hosted.py, never as functions.
    hosted: list[dict[str, Any]] = field(default_factory=list)


@dataclass(slots=True)
class ModelResponse:
    message: Message
    #: Normalised finish reason: "stop", "length", "tool_calls", "content_filter",
    #: "malformed_tool_call", or any other provider value lower-cased (an open set).
    finish_reason: str
    #: The provider's own value, unmapped.
    raw_finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    model: str | None = None
    response_id: str | None = None
    raw: Any = None
    #: The validated structured answer, once the runtime has checked it against `output_schema`.
    output: Any = None
    #: What the request's hosted tools reported, by kind (`{"web_search": {"queries", "citations"}}`), or None.
    hosted: dict[str, Any] | None = None
    #: In a journaled run, each model that failed over before this one answered: its name, error kind and message,
    #: and the key of the request as it was asked (what `plait runs export --cassette` replays as that failure).
    failed_over: list[dict[str, Any]] = field(default_factory=list)

    @property
    def text(self) -> str:
        return self.message.text

    @property
    def tool_calls(self) -> list[ToolCall]:
        return self.message.tool_calls


# --- stream events -------------------------------------------------------------


@dataclass(slots=True)
class TextDelta:
    text: str
    phase: str | None = None
    type: str = "text"


@dataclass(slots=True)
class ToolCallDelta:
    #: The accumulator's id: stable across fragments even when the wire omits ids after the first.
    call_id: str
    #: A raw JSON fragment, usually not parseable on its own.
    arguments: str
    step: int = 0
    type: str = "tool_call_delta"


@dataclass(slots=True)
class ToolCallStart:
    call_id: str
    name: str
    #: The complete parsed arguments (None if malformed).
    arguments: dict[str, Any] | None
    step: int = 0
    type: str = "tool_call_start"


@dataclass(slots=True)
class ResponseDone:
    response: ModelResponse
    type: str = "done"


StreamEvent = TextDelta | ToolCallDelta | ToolCallStart | ResponseDone


class ProviderError(Exception):
    """Every provider failure, translated at the boundary.

    `message` keeps the provider's own words; `kind` is one of ERROR_KINDS.
    Never carries request headers, so a key cannot leak through it.
    """

    def __init__(
        self,
        kind: str,
        message: str,
        *,
        provider: str | None = None,
        model: str | None = None,
        status: int | None = None,
        retry_after: float | None = None,
        raw: Any = None,
    ) -> None:
        # The boundary where a provider's words enter plait: a key the server echoes back goes no further.
        message = mask(message)
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.provider = provider
        self.model = model
        self.status = status
        self.retry_after = retry_after
        self.raw = raw

    def __repr__(self) -> str:
        return f"ProviderError(kind={self.kind!r}, message={self.message!r}, status={self.status!r})"

    def __str__(self) -> str:
        where = f"{self.provider}/{self.model}: " if self.provider and self.model else ""
        return f"{where}{self.kind}: {self.message}"


@runtime_checkable
class Provider(Protocol):
    """One configured model endpoint. Built once per model declaration."""

    name: str

    async def complete(self, request: ModelRequest) -> ModelResponse: ...

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]: ...

    async def aclose(self) -> None: ...


def final_answer_text(message: Message) -> str:
    """The answer without narration: drops parts explicitly tagged `commentary`.

    An exclusion list, not an allow-list, so a third phase a provider invents
    later is kept rather than silently dropped.
    """
    return "".join(p.text for p in message.content if p.phase != "commentary")
