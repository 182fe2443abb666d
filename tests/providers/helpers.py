"""Small drivers for provider tests: one call, buffered or streamed, against a FakeServer."""

from __future__ import annotations

import asyncio
from typing import Any

from plait.runtime.providers import make_provider
from plait.runtime.providers.base import (
    Message,
    ModelRequest,
    ModelResponse,
    ProviderError,
    ResponseDone,
    StreamEvent,
    ToolSpec,
)
from plait.runtime.providers.fake import FakeServer

ADD = ToolSpec(
    "add",
    "Add two integers.",
    {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]},
)


def request(messages: list[Message] | None = None, **fields: Any) -> ModelRequest:
    fields.setdefault("tools", [ADD])
    model = fields.pop("model", "fake-model")
    return ModelRequest(model, messages or [Message.user("What is 2 + 3?")], **fields)


async def call(provider: Any, req: ModelRequest, stream: bool) -> tuple[ModelResponse, list[StreamEvent]]:
    if not stream:
        return await provider.complete(req), []
    events = [event async for event in provider.stream(req)]
    assert isinstance(events[-1], ResponseDone)
    return events[-1].response, events[:-1]


def run_once(server: FakeServer, flavour: str, stream: bool, req: ModelRequest | None = None, **config: Any):
    """One call on a fresh provider; returns (response, events) or the ProviderError raised."""

    async def go():
        provider = make_provider(server.config(flavour, **config))
        try:
            return await call(provider, req or request(), stream)
        except ProviderError as err:
            return err
        finally:
            await provider.aclose()

    return asyncio.run(go())


def streamed_events(server: FakeServer, flavour: str, req: ModelRequest, **config: Any):
    """Events seen before a stream failed, and the error (or None)."""

    async def go():
        provider = make_provider(server.config(flavour, **config))
        seen: list[StreamEvent] = []
        try:
            async for event in provider.stream(req):
                seen.append(event)
        except ProviderError as err:
            return seen, err
        finally:
            await provider.aclose()
        return seen, None

    return asyncio.run(go())
