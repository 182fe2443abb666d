"""OpenAI-compatible model config (Ollama, vLLM, LM Studio, llama.cpp, OpenRouter) → Chat Completions.

The wire is OpenAI Chat; the differences are configuration: `base_url` is
required (it includes the `/v1`), no key unless `api_key = env(...)` names one,
and `max_tokens` rather than OpenAI's newer `max_completion_tokens`. The quirks
of these servers' replies are absorbed by the Chat parsers themselves. A declared
`output` is asked for as `response_format` and also told in the system message,
since many of these servers take `response_format` without enforcing it.
"""

from __future__ import annotations

from typing import Any

import httpx

from plait.core.kinds import ModelNode
from .base import ModelRequest, ProviderError
from .openai import OpenAIProvider
from .openai_chat import chat_body
from .structured import tell_chat

__all__ = ["CompatibleProvider"]


class CompatibleProvider(OpenAIProvider):
    provider = "openai-compatible"
    default_base_url = ""

    def __init__(self, config: ModelNode, client: httpx.AsyncClient | None = None) -> None:
        if not config.base_url:
            raise ProviderError(
                "invalid_request",
                f"model `{config.name}`: openai-compatible needs base_url (e.g. http://localhost:11434/v1)",
                provider=self.provider,
                model=config.name,
            )
        super().__init__(config, client)
        # Few compatible servers implement the Responses API; Chat is the common ground.
        self.responses_api = False

    def body(self, request: ModelRequest, stream: bool) -> dict[str, Any]:
        body = chat_body(
            request, stream=stream, temperature=self._temperature(request), max_tokens=self._max_tokens(request)
        )
        if request.output_schema is not None and request.output_via != "told":  # "told": chat_body told it
            # Many of these servers accept `response_format` and ignore it: the schema is also told in words.
            tell_chat(body["messages"], request.output_schema)
        return body
