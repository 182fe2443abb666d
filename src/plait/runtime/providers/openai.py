"""OpenAI model config → Chat Completions or, with `api = "responses"`, the Responses API.

`continuation_id` (from openai_responses) is re-exported here: the agent loop
calls it between tool rounds to decide whether to set
`ModelRequest.previous_response_id`. If the server has lost that response
anyway (deleted, or never stored), the call is made once more with the full
history, so a stale id costs a round trip rather than the run.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, AsyncIterator, Coroutine

import httpx

from plait.core.kinds import ModelNode
from .base import ModelRequest, ModelResponse, ProviderError, StreamEvent
from .http import HTTPProvider, StreamState
from .openai_chat import ChatStream, chat_body, parse_chat
from .openai_responses import ResponsesStream, continuation_id, parse_responses, responses_body

__all__ = ["OpenAIProvider", "continuation_id"]

#: Reasoning models reject `max_tokens` and want `max_completion_tokens`.
_REASONING = re.compile(r"^(o\d|gpt-5)")


class OpenAIProvider(HTTPProvider):
    provider = "openai"
    default_base_url = "https://api.openai.com/v1"

    def __init__(self, config: ModelNode, client: httpx.AsyncClient | None = None) -> None:
        super().__init__(config, client)
        self.responses_api = config.api == "responses"

    def url(self, request: ModelRequest, stream: bool) -> str:
        return f"{self.base_url}/responses" if self.responses_api else f"{self.base_url}/chat/completions"

    def auth_headers(self, key: str) -> dict[str, str]:
        return {"authorization": f"Bearer {key}"}

    def body(self, request: ModelRequest, stream: bool) -> dict[str, Any]:
        temperature, max_tokens = self._temperature(request), self._max_tokens(request)
        if self.responses_api:
            return responses_body(request, stream=stream, temperature=temperature, max_tokens=max_tokens)
        field = "max_completion_tokens" if _REASONING.match(request.model) else "max_tokens"
        return chat_body(request, stream=stream, temperature=temperature, max_tokens=max_tokens, max_tokens_field=field)

    def parse(self, data: Any, request: ModelRequest) -> ModelResponse:
        return parse_responses(data, request) if self.responses_api else parse_chat(data, request)

    def stream_state(self, request: ModelRequest) -> StreamState:
        return ResponsesStream(request) if self.responses_api else ChatStream(request)

    def complete(self, request: ModelRequest) -> Coroutine[Any, Any, ModelResponse]:
        if request.previous_response_id is None:
            return super().complete(request)  # no extra coroutine layer on every call
        return self._complete_continuing(request)

    async def _complete_continuing(self, request: ModelRequest) -> ModelResponse:
        try:
            return await super().complete(request)
        except ProviderError as err:
            if not _lost_state(request, err):
                raise
        return await super().complete(dataclasses.replace(request, previous_response_id=None))

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        if request.previous_response_id is None or not self.responses_api:
            return super().stream(request)  # no extra generator layer on every event
        return self._stream_continuing(request)

    async def _stream_continuing(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        delivered = False
        try:
            async for event in super().stream(request):
                delivered = True
                yield event
            return
        except ProviderError as err:
            if delivered or not _lost_state(request, err):
                raise
        async for event in super().stream(dataclasses.replace(request, previous_response_id=None)):
            yield event


def _lost_state(request: ModelRequest, err: ProviderError) -> bool:
    """The server no longer has the response we continued from (deleted, expired, never stored)."""
    return (
        request.previous_response_id is not None
        and err.kind in ("invalid_request", "model_not_found")
        and "previous" in err.message.lower()
    )
