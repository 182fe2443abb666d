"""Model config → API key from the environment, or a clear auth error.

Keys are read from the environment only and wrapped so that no repr, log line
or error message can show them.
"""

from __future__ import annotations

import os

from ..secret_values import remember
from plait.core.kinds import ModelNode
from .base import ProviderError

__all__ = ["DEFAULT_KEY_ENV", "Secret", "resolve_key"]

#: The variable each provider's own SDK reads, in order of preference.
DEFAULT_KEY_ENV: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "google": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    # Local servers (Ollama, vLLM, llama.cpp) take no key unless one is named.
    "openai-compatible": (),
}


class Secret:
    """A key that prints as `***`."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__


def resolve_key(config: ModelNode) -> Secret | None:
    """The key for `config`, None when the provider needs none; ProviderError(auth) when missing."""
    names = (config.api_key_env,) if config.api_key_env else DEFAULT_KEY_ENV.get(config.provider, ())
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            remember(value)  # masked in every output from now on, if a server echoes it back
            return Secret(value)
    if not names:
        return None
    wanted = " or ".join(names)
    raise ProviderError(
        "auth",
        f"no API key: set the environment variable {wanted} (model `{config.name}`)",
        provider=config.provider,
        model=config.name,
    )
