"""A provider's raw finish reason → plait's normalised one, one table per provider.

Streamed and buffered paths call the same `normalise`, so a turn reads the same
however it was fetched. The set is open: a value missing from a table passes
through lower-cased (Google `TOO_MANY_TOOL_CALLS` → `too_many_tool_calls`), and
`ModelResponse.raw_finish_reason` keeps the provider's own word, so every terminal
state reaches the user as itself. `NORMAL` are the endings that need no warning.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from .base import ToolCall

__all__ = ["ANTHROPIC", "GOOGLE", "NORMAL", "OPENAI_CHAT", "OPENAI_RESPONSES", "normalise"]

#: Normalised reasons of a turn that ended as the model meant it to.
NORMAL = frozenset({"stop", "tool_calls"})

OPENAI_CHAT: Mapping[str, str] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",  # legacy functions API
    "content_filter": "content_filter",
}

#: Keys are `status` for finished responses and `incomplete_details.reason` otherwise.
OPENAI_RESPONSES: Mapping[str, str] = {
    "completed": "stop",
    "max_output_tokens": "length",
    "content_filter": "content_filter",
}

ANTHROPIC: Mapping[str, str] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}

GOOGLE: Mapping[str, str] = {
    "STOP": "stop",
    "FINISH_REASON_UNSPECIFIED": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
    "IMAGE_PROHIBITED_CONTENT": "content_filter",
    "MODEL_ARMOR": "content_filter",
    "MALFORMED_FUNCTION_CALL": "malformed_tool_call",
    # UNEXPECTED_TOOL_CALL, TOO_MANY_TOOL_CALLS, MALFORMED_RESPONSE, LANGUAGE, OTHER... pass through
    # lower-cased: they are not a stop, and the runtime warns with Gemini's own word.
}


def normalise(table: Mapping[str, str], raw: str | None, calls: Sequence[ToolCall] = ()) -> str:
    """Map `raw` through `table`; tool calls and malformed arguments override a plain stop.

    Tool calls are detected from the calls themselves, never from the reason alone:
    OpenAI answers a named tool_choice with "stop", Google always says STOP, and
    some OpenAI-compatible servers send no reason at all.
    """
    if any(call.malformed for call in calls):
        return "malformed_tool_call"
    if raw:
        reason = table.get(raw) or raw.lower()
    else:
        reason = "stop"
    if calls and reason == "stop":
        return "tool_calls"
    return reason
