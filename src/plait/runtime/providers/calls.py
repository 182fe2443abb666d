"""Raw tool-call argument text → a ToolCall, malformed arguments marked rather than guessed.

A call whose arguments do not parse is never silently `{}` (that would run the
tool with no arguments); an empty string is `{}` because tools without
parameters are sent that way.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from .base import ToolCall

__all__ = ["SYNTHETIC_PREFIX", "CallBuffer", "parse_arguments", "synthetic_id", "tool_call", "wire_arguments"]

#: Ids we invent for providers that send none; never sent back to the provider.
SYNTHETIC_PREFIX = "plait_"


def synthetic_id() -> str:
    return SYNTHETIC_PREFIX + secrets.token_hex(6)


def parse_arguments(raw: str) -> tuple[dict[str, Any] | None, bool]:
    """(arguments, malformed)."""
    if not raw.strip():
        return {}, False
    try:
        value = json.loads(raw)
    except ValueError:
        return None, True
    if not isinstance(value, dict):
        return None, True
    return value, False


def tool_call(call_id: str, name: str, arguments: Any, signature: str | None = None) -> ToolCall:
    """From wire arguments: a JSON string (OpenAI) or an already-parsed object (Anthropic, Google)."""
    if isinstance(arguments, dict):
        return ToolCall(call_id, name, arguments, json.dumps(arguments, ensure_ascii=False), signature=signature)
    raw = arguments if isinstance(arguments, str) else ("" if arguments is None else json.dumps(arguments))
    parsed, malformed = parse_arguments(raw)
    return ToolCall(call_id, name, parsed, raw, malformed, signature)


def wire_arguments(call: ToolCall) -> str:
    """A call's arguments as JSON text, for wires that carry them so (OpenAI): the text as received, if any."""
    return call.raw_arguments or json.dumps(call.arguments or {}, ensure_ascii=False)


class CallBuffer:
    """One streamed call's fragments. The first id seen is authoritative; later ones are ignored."""

    __slots__ = ("id", "name", "parts", "started")

    def __init__(self, call_id: str | None, name: str | None) -> None:
        self.id = call_id or synthetic_id()
        self.name = name or ""
        self.parts: list[str] = []
        self.started = False

    def call(self) -> ToolCall:
        return tool_call(self.id, self.name, "".join(self.parts))
