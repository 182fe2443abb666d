"""A run's model calls → recordings: a provider wrapper that files each reply (or failure) under its request's key.

`Recorder.wrap(name, provider)` is handed to the engine (`Engine.wrap_provider`),
so every provider the engine makes (HTTP or scripted) is recorded at the one
boundary all model calls cross, after the runtime has filled in the serving
model's settings and before anything on the wire. A failure is recorded too,
so a replay takes the same fallback edge the recorded run took.
"""

from __future__ import annotations

import json
from typing import Any, AsyncIterator

from ..history import message_to_json
from ..providers.base import ModelRequest, ModelResponse, Provider, ProviderError, ResponseDone, StreamEvent
from .file import Cassette, Interaction
from .request import canonical_bytes, key_of

__all__ = ["Recorder", "RecordingProvider", "reply_json"]


def reply_json(response: ModelResponse) -> dict[str, Any]:
    """A response as a cassette keeps it: everything replay needs to give it back as it came."""
    usage = response.usage
    return {
        "message": message_to_json(response.message),
        "finish_reason": response.finish_reason,
        "raw_finish_reason": response.raw_finish_reason,
        "usage": [usage.input_tokens, usage.output_tokens],
        "model": response.model,
        "response_id": response.response_id,
        # What the request's hosted tools reported (`{{TOOL.citations}}` reads it), kept as the journal keeps it.
        **({"hosted": response.hosted} if response.hosted else {}),
    }


def error_json(error: ProviderError) -> dict[str, Any]:
    return {"kind": error.kind, "message": error.message, "status": error.status}


class Recorder:
    """The recordings of every run of one engine, in the order their calls ended."""

    def __init__(self) -> None:
        self.interactions: list[Interaction] = []
        #: Tool results, when the engine's tools are recorded too (cassettes/tools.py).
        self.tool_results: list[dict[str, Any]] = []

    def wrap(self, name: str, provider: Provider) -> Provider:
        return RecordingProvider(provider, name, self)

    def cassette(self, *, spec: str | None = None, entry: str | None = None) -> Cassette:
        return Cassette(list(self.interactions), spec, entry, tool_results=list(self.tool_results))

    def add(self, name: str, request: ModelRequest, text: bytes, **outcome: Any) -> None:
        """One recording: `text` is the request's canonical JSON as it was asked (before the provider ran)."""
        self.interactions.append(
            Interaction(
                key_of(text), name, request.agent, "/".join(request.path), request.step, json.loads(text), **outcome
            )
        )


class RecordingProvider:
    """Calls the provider it wraps and records what it answered; otherwise it is that provider."""

    def __init__(self, inner: Any, name: str, recorder: Recorder) -> None:
        self.inner = inner
        self.name = name
        self.recorder = recorder

    def __getattr__(self, attribute: str) -> Any:
        # snapshot/restore and anything else a provider offers pass through (called only for missing names).
        return getattr(self.inner, attribute)

    def for_run(self, journaled: bool = False) -> "RecordingProvider":
        view = getattr(self.inner, "for_run", None)
        return RecordingProvider(view(journaled=journaled) if view else self.inner, self.name, self.recorder)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        document = canonical_bytes(request)  # before the call: nothing the provider does to the request counts
        try:
            response: ModelResponse = await self.inner.complete(request)
        except ProviderError as error:
            self.recorder.add(self.name, request, document, error=error_json(error))
            raise
        self.recorder.add(self.name, request, document, reply=reply_json(response))
        return response

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        document = canonical_bytes(request)
        try:
            async for event in self.inner.stream(request):
                if isinstance(event, ResponseDone):
                    self.recorder.add(self.name, request, document, reply=reply_json(event.response))
                yield event
        except ProviderError as error:
            self.recorder.add(self.name, request, document, error=error_json(error))
            raise

    async def aclose(self) -> None:
        await self.inner.aclose()
