"""A conversation's messages → the JSON snapshot, repaired history and pair-aware window.

- `to_json` / `from_json`: messages as plain JSON, so a run can be stored and
  restored and continue identically.
- `repair`: an assistant tool call with no result (an early break, a pending
  approval abandoned by a new prompt) gets a synthetic error result, because
  providers reject such a history one turn away from the cause.
- `window`: `keep_last(N)` that never keeps a tool result whose call it cut.
- `ContextRegistry`: the layered system prompt, rebuilt for every request.
"""

from __future__ import annotations

from typing import Any, Callable

from .providers.base import Message, TextPart, ToolCall

__all__ = ["ContextRegistry", "from_json", "repair", "to_json", "window"]

UNANSWERED = "tool `{name}` was never run: the turn ended before it answered. Call it again if it is still needed."


def message_to_json(m: Message) -> dict[str, Any]:
    out: dict[str, Any] = {
        "role": m.role,
        "content": [{"text": p.text, "phase": p.phase} if p.phase else {"text": p.text} for p in m.content],
    }
    if m.tool_calls:
        out["tool_calls"] = [
            {
                "id": c.id,
                "name": c.name,
                "arguments": c.arguments,
                "raw_arguments": c.raw_arguments,
                "malformed": c.malformed,
            }
            | ({"signature": c.signature} if c.signature is not None else {})
            for c in m.tool_calls
        ]
    # created_at: server state expires, so a restored run needs it to continue from it.
    for key in ("tool_call_id", "name", "model", "response_id", "created_at"):
        value = getattr(m, key)
        if value is not None:
            out[key] = value
    if m.is_error:
        out["is_error"] = True
    return out


def message_from_json(d: dict[str, Any]) -> Message:
    return Message(
        d["role"],
        [TextPart(p["text"], p.get("phase")) for p in d.get("content", ())],
        [
            ToolCall(
                c["id"],
                c["name"],
                c.get("arguments"),
                c.get("raw_arguments", ""),
                c.get("malformed", False),
                c.get("signature"),
            )
            for c in d.get("tool_calls", ())
        ],
        tool_call_id=d.get("tool_call_id"),
        name=d.get("name"),
        is_error=d.get("is_error", False),
        model=d.get("model"),
        response_id=d.get("response_id"),
        created_at=d.get("created_at"),
    )


def to_json(messages: list[Message]) -> list[dict[str, Any]]:
    return [message_to_json(m) for m in messages]


def from_json(data: list[dict[str, Any]]) -> list[Message]:
    return [message_from_json(d) for d in data]


def repair(messages: list[Message]) -> list[str]:
    """Answer every unanswered tool call in place; returns the names of the tools repaired."""
    answered = {m.tool_call_id for m in messages if m.role == "tool"}
    repaired: list[str] = []
    i = 0
    while i < len(messages):
        m = messages[i]
        i += 1
        if m.role != "assistant" or not m.tool_calls:
            continue
        # Results must follow their call's assistant turn, so insert right after it.
        insert_at = i
        while insert_at < len(messages) and messages[insert_at].role == "tool":
            insert_at += 1
        for call in m.tool_calls:
            if call.id in answered:
                continue
            fix = Message(
                "tool",
                [TextPart(UNANSWERED.format(name=call.name))],
                tool_call_id=call.id,
                name=call.name,
                is_error=True,
            )
            messages.insert(insert_at, fix)
            insert_at += 1
            answered.add(call.id)
            repaired.append(call.name)
        i = insert_at
    return repaired


def window(messages: list[Message], keep_last: int | None) -> list[Message]:
    """The last `keep_last` messages, minus results whose call fell outside (a ceiling, not a count)."""
    if keep_last is None or len(messages) <= keep_last:
        return messages
    kept = messages[len(messages) - keep_last :] if keep_last > 0 else []
    calls = {c.id for m in kept if m.role == "assistant" for c in m.tool_calls}
    return [m for m in kept if m.role != "tool" or m.tool_call_id in calls]


class ContextRegistry:
    """Named system-prompt layers in order; a layer is text or a function returning text."""

    __slots__ = ("_layers",)

    def __init__(self, base: str | None = None) -> None:
        self._layers: dict[str, str | Callable[[], str | None]] = {}
        if base:
            self._layers["system"] = base

    def set(self, name: str, layer: str | Callable[[], str | None] | None) -> None:
        if layer is None:
            self._layers.pop(name, None)
        else:
            self._layers[name] = layer

    def names(self) -> list[str]:
        return list(self._layers)

    def build(self) -> str | None:
        if not self._layers:
            return None
        parts = []
        for layer in self._layers.values():
            text = layer() if callable(layer) else layer
            if text:
                parts.append(text)
        return "\n\n".join(parts) or None
