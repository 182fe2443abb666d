"""A model request → what its journal row says of it: a digest per message, and each message's body the first time.

`plait runs diff` finds the first request two runs made differently, and
which message differs, from these rows alone. A message is compared by what a
model reads in it (role, text, tool calls and their arguments, a tool result's
name and error flag), never by ids or timestamps that differ on every run; its
body is stored once per run, in the row of the first request that sent it, so
a conversation of N turns stores each message once, not N times.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from ..providers.base import Message, ModelRequest

__all__ = ["comparable", "describe_request", "digest"]


def comparable(message: Message) -> dict[str, Any]:
    """What a model reads in a message, as JSON: no call ids, timestamps or serving model."""
    out: dict[str, Any] = {"role": message.role, "text": "".join(p.text for p in message.content)}
    if message.tool_calls:
        out["tool_calls"] = [{"name": c.name, "arguments": c.arguments} for c in message.tool_calls]
    if message.name is not None:
        out["name"] = message.name
    if message.is_error:
        out["is_error"] = True
    return out


def digest(value: Any) -> str:
    try:
        data = orjson.dumps(value, option=orjson.OPT_SORT_KEYS, default=str)
    except (
        TypeError
    ):  # what orjson refuses (a lone surrogate a model or a file name sent): escaped, as base.encode does
        data = json.dumps(value, sort_keys=True, default=str, ensure_ascii=True, separators=(",", ":")).encode()
    return hashlib.blake2b(data, digest_size=8).hexdigest()


def describe_request(request: ModelRequest, seen: set[str], cache: dict[int, tuple[Any, str, dict]]) -> dict[str, Any]:
    """The row fields of a request: `digests` (one per message, in order), `system` (its digest), `tools` (names),
    and `bodies` (digest → comparable message) for the messages and system prompt `seen` has not had yet.

    `cache` maps a message object (held, so its id stays its own) to its digest: a turn re-sends the
    conversation so far, and each message is digested once."""
    digests = []
    bodies: dict[str, Any] = {}
    for message in request.messages:
        hit = cache.get(id(message))
        if hit is None or hit[0] is not message:
            body = comparable(message)
            hit = cache[id(message)] = (message, digest(body), body)
        digests.append(hit[1])
        if hit[1] not in seen:
            seen.add(hit[1])
            bodies[hit[1]] = hit[2]
    row: dict[str, Any] = {"digests": digests, "tools": [t.name for t in request.tools]}
    if request.system:
        system = digest(request.system)
        row["system"] = system
        if system not in seen:
            seen.add(system)
            bodies[system] = {"role": "system", "text": request.system}
    if request.output_schema is not None:
        row["output"] = digest(request.output_schema)
    if bodies:
        row["bodies"] = bodies
    return row
