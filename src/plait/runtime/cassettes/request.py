"""A `ModelRequest` → its canonical JSON and the key a cassette files its reply under.

The canonical form is what the provider is asked, in plait's provider-neutral
terms: the model id, system prompt, messages, tools and the settings that
change an answer. Left out is what changes from run to run without changing
the question (when a message was made, which declaration served it, response
ids and server-state handles, timeouts, the step counter) and anything the
provider adds on the wire: API keys and headers never reach a `ModelRequest`,
so they cannot reach a key or a cassette. Secret values the process has read
(`secret_values.remember`) are masked before hashing, so a recording and its
replay key the same text whether or not the value is known at replay.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ..providers.base import Message, ModelRequest
from ..secret_values import mask_json

__all__ = ["canonical", "canonical_text", "request_key"]


def _message(m: Message) -> dict[str, Any]:
    out: dict[str, Any] = {
        "role": m.role,
        "content": [{"text": p.text, "phase": p.phase} if p.phase else {"text": p.text} for p in m.content],
    }
    if m.tool_calls:
        # The parsed arguments say what was asked; the raw text only when it did not parse.
        out["tool_calls"] = [
            {"id": c.id, "name": c.name, "arguments": c.arguments}
            | ({"raw_arguments": c.raw_arguments} if c.arguments is None else {})
            for c in m.tool_calls
        ]
    if m.tool_call_id is not None:
        out["tool_call_id"] = m.tool_call_id
    if m.name is not None:
        out["name"] = m.name
    if m.is_error:
        out["is_error"] = True
    return out


def canonical(request: ModelRequest) -> dict[str, Any]:
    """The request as a JSON value, in a fixed field order (the order a miss's difference is looked for in)."""
    return {
        "model": request.model,
        "system": request.system,
        "tools": [{"name": t.name, "description": t.description, "parameters": t.parameters} for t in request.tools],
        "tool_choice": request.tool_choice,
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "output_schema": request.output_schema,
        "messages": [_message(m) for m in request.messages],
    }


def canonical_text(value: dict[str, Any]) -> str:
    """Canonical JSON: sorted keys, no spaces, text as written, remembered secrets masked."""
    return mask_json(json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str))


def request_key(request: ModelRequest) -> str:
    """The SHA-256 (hex, 32 digits) of the canonical request: the same question gets the same key in any run."""
    return hashlib.sha256(canonical_text(canonical(request)).encode("utf-8", "surrogatepass")).hexdigest()[:32]
