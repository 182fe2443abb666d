"""A spec's provider prefix → its provider: one module per wire format.

Modules are imported on first use so `plait run` against the scripted provider
never pays for the HTTP stack.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

    from plait.core.kinds import ModelNode
    from .base import Provider

__all__ = ["PROVIDERS", "make_provider"]

#: provider prefix -> "module:class", relative to this package.
PROVIDERS: dict[str, str] = {
    "scripted": ".scripted:ScriptedProvider",
    "openai": ".openai:OpenAIProvider",
    "anthropic": ".anthropic:AnthropicProvider",
    "google": ".google:GoogleProvider",
    "openai-compatible": ".compatible:CompatibleProvider",
}


def make_provider(
    config: "ModelNode", client: "httpx.AsyncClient | None" = None, *, root: str | None = None
) -> "Provider":
    """Build the provider for one model declaration (its graph record).

    HTTP providers share `client` when given (one connection pool per run);
    otherwise they create and own one. `root` is the spec's folder: a scripted
    model's replies file must lie inside it (None: the working directory).
    """
    target = PROVIDERS.get(config.provider)
    if target is None:
        from .base import ProviderError

        raise ProviderError("unsupported", f"unknown provider `{config.provider}`", model=config.name)
    module, _, cls = target.partition(":")
    made = getattr(import_module(module, __name__), cls)
    # Only the scripted provider reads a file; the HTTP ones take no folder.
    if config.provider == "scripted":
        return made(config, client=client, root=root)
    return made(config, client=client)
