"""A conversation and the model about to be called → the server-state id to continue from, or None.

The one rule for `previous_response_id`: offered only to the model that created
the state, and only while the provider still keeps it. Past the provider's
retention (or at an unknown age) the full history is sent instead; a provider
without server state has no entry in RETENTION and never gets an id.
"""

from __future__ import annotations

import time
from typing import Mapping, Sequence

from .base import Message

__all__ = ["RETENTION", "continuation_id"]

_DAY = 24 * 3600.0

#: How long each provider keeps a stored response (seconds). The scripted provider stands in for
#: OpenAI's Responses API, so it keeps OpenAI's window and offline runs exercise the same gate.
RETENTION: Mapping[str, float] = {"openai": 30 * _DAY, "google": 3 * _DAY, "scripted": 30 * _DAY}


def continuation_id(
    messages: Sequence[Message], model: str, *, retention: float | None = RETENTION["openai"], now: float | None = None
) -> str | None:
    """The `previous_response_id` to continue from, or None to resend the full history.

    Given only when the last assistant message's `Message.model` equals `model`
    (providers set the requested model id; the runtime relabels turns with the
    declaration name and passes that), it carries a `response_id`, and its
    `created_at` is known and younger than `retention`.
    """
    if retention is None:
        return None
    last = next((m for m in reversed(messages) if m.role == "assistant"), None)
    if last is None or last.response_id is None or last.model != model or last.created_at is None:
        return None
    if (time.time() if now is None else now) - last.created_at >= retention:
        return None
    return last.response_id
