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
from operator import is_
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from ..providers.base import Message, ModelRequest

__all__ = ["RequestRows", "comparable", "digest"]


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


class RequestRows:
    """One run's model requests → the fields of their journal rows: `digests` (one per message, in order),
    `system` (its digest), `tools` (names), `output` (the answer schema's digest), and `bodies` (digest →
    comparable message) for the messages and system prompts no earlier row of the run holds.

    A turn re-sends the conversation so far: each message object is digested once, and per conversation (a
    request's graph path) the digests its last call sent are kept, so a call that begins with those same
    messages looks up only the rest."""

    __slots__ = ("bodies", "_messages", "_open", "_system", "_schemas")

    def __init__(self) -> None:
        #: Digests whose bodies a row of this run holds (an earlier attempt's rows included, on a resume).
        self.bodies: set[str] = set()
        #: id(message) → (the message, held so its id stays its own; its digest; its comparable body).
        self._messages: dict[int, tuple[Any, str, dict[str, Any]]] = {}
        #: Per graph path: (the messages its last call sent, their digests).
        self._open: dict[tuple[str, ...], tuple[tuple[Any, ...], list[str]]] = {}
        self._system: dict[str, str] = {}
        self._schemas: dict[int, tuple[Any, str]] = {}

    def describe(self, request: ModelRequest) -> dict[str, Any]:
        messages, seen = request.messages, self.bodies
        last = self._open.get(request.path)
        if last is not None and len(last[0]) <= len(messages) and all(map(is_, last[0], messages)):
            digests, start = last[1][:], len(last[0])
        else:
            digests, start = [], 0
        bodies: dict[str, Any] = {}
        cache = self._messages
        for message in messages[start:]:
            hit = cache.get(id(message))
            if hit is None or hit[0] is not message:
                body = comparable(message)
                hit = cache[id(message)] = (message, digest(body), body)
            digests.append(hit[1])
            if hit[1] not in seen:
                seen.add(hit[1])
                bodies[hit[1]] = hit[2]
        self._open[request.path] = (tuple(messages), digests[:])
        row: dict[str, Any] = {"digests": digests, "tools": [t.name for t in request.tools]}
        if request.system:
            system = self._system.get(request.system)
            if system is None:
                system = self._system[request.system] = digest(request.system)
            row["system"] = system
            if system not in seen:
                seen.add(system)
                bodies[system] = {"role": "system", "text": request.system}
        schema = request.output_schema
        if schema is not None:
            known = self._schemas.get(id(schema))
            if known is None or known[0] is not schema:
                known = self._schemas[id(schema)] = (schema, digest(schema))
            row["output"] = known[1]
        if bodies:
            row["bodies"] = bodies
        return row
