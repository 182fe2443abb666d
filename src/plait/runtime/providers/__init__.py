"""A spec's provider prefix → its provider: one module per wire format.

Modules are imported on first use so `plait run` against the scripted provider
never pays for the HTTP stack.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

    from .base import ModelConfig, Provider

__all__ = ["PROVIDERS", "make_provider"]

#: provider prefix -> "module:class", relative to this package.
PROVIDERS: dict[str, str] = {
    "scripted": ".scripted:ScriptedProvider",
    "openai": ".openai:OpenAIProvider",
    "anthropic": ".anthropic:AnthropicProvider",
    "google": ".google:GoogleProvider",
    "openai-compatible": ".compatible:CompatibleProvider",
}


def make_provider(config: "ModelConfig", client: "httpx.AsyncClient | None" = None) -> "Provider":
    """Build the provider for one model declaration.

    HTTP providers share `client` when given (one connection pool per run);
    otherwise they create and own one.
    """
    target = PROVIDERS.get(config.provider)
    if target is None:
        from .base import ProviderError

        raise ProviderError("unsupported", f"unknown provider `{config.provider}`", model=config.name)
    module, _, cls = target.partition(":")
    return getattr(import_module(module, __name__), cls)(config, client=client)
