"""A `ModelRequest` → its canonical JSON and the key a cassette files its reply under.

The canonical form is what the provider is asked, in plait's provider-neutral
terms: the model id, system prompt, messages, tools and the settings that
change an answer (the fields a model request carries from its runnable and
model: `attr(journaled=True)` in src/plait/core/kinds/). Left out is what changes from run to run without changing
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
from operator import attrgetter, is_
from typing import Any

import orjson

from plait.core.kinds import ModelNode, journaled_fields

from ..providers.base import Message, ModelRequest, ToolSpec
from ..secret_values import known, mask_json

__all__ = [
    "SETTINGS",
    "Cache",
    "RunKeys",
    "canonical",
    "canonical_bytes",
    "canonical_text",
    "key_of",
    "request_key",
]

#: The settings that change an answer, each a field of the request by the same name: the journaled fields of a
#: model (a runnable's own settings override the same ones).
SETTINGS: tuple[str, ...] = journaled_fields(ModelNode)
#: The canonical JSON's keys in its (sorted) order, split at the messages: those written before them and after.
_KEYS = sorted(("model", "system", "tools", "output_schema", "messages", *SETTINGS))
_BEFORE = tuple(_KEYS[: _KEYS.index("messages")])
_AFTER = tuple(_KEYS[_KEYS.index("messages") + 1 :])
#: A request's values that, with its tool list and schema, make the JSON around its messages.
_SCALARS = attrgetter(*sorted(("model", "system", *SETTINGS)))

#: A run's encodings, made once: id(message) → (the message, its JSON); a runnable's settings → (its tool list, its
#: schema, the JSON before and after the messages). Objects are held so their ids stay their own.
Cache = dict[Any, tuple[Any, ...]]


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


def _tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [{"name": t.name, "description": t.description, "parameters": t.parameters} for t in tools]


def canonical(request: ModelRequest) -> dict[str, Any]:
    """The request as a JSON value, in a fixed field order (the order a miss's difference is looked for in)."""
    return {
        "model": request.model,
        "system": request.system,
        "tools": _tools(request.tools),
        **{name: getattr(request, name) for name in SETTINGS},
        "output_schema": request.output_schema,
        "messages": [_message(m) for m in request.messages],
        # Only when asked for, so a request without hosted tools keys as it always has.
        **({"hosted": request.hosted} if request.hosted else {}),
    }


def _dumps(value: Any) -> bytes:
    """Canonical JSON bytes: sorted keys, no spaces, text as written (UTF-8)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS, default=str)
    except TypeError:  # a lone surrogate (a model's broken text) that orjson will not encode
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
        return text.encode("utf-8", "surrogatepass")


def _member(request: ModelRequest, name: str) -> bytes:
    """One key of the canonical JSON and its value (`"model":"gpt-4o-mini"`)."""
    if name == "tools":
        value = _dumps(_tools(request.tools))
    elif name == "output_schema" and request.output_schema is None:
        value = b"null"
    else:
        value = _dumps(getattr(request, name))
    return b'"' + name.encode() + b'":' + value


def _around(request: ModelRequest, cache: Cache | None) -> tuple[bytes, bytes]:
    """The canonical JSON before and after the messages (the keys in sorted order, as _dumps(canonical(...)) has
    them), the same for every call of one runnable: cached by its values, the tool list and schema by identity."""
    tools, schema, hosted = request.tools, request.output_schema, request.hosted
    key = (_SCALARS(request), id(tools), id(schema), id(hosted))  # a tuple: never one of the messages' int keys
    if cache is not None:
        hit = cache.get(key)
        if hit is not None and hit[0] is tools and hit[1] is schema and hit[4] is hosted:
            return hit[2], hit[3]
    # `hosted` sorts first among the keys before the messages, and is written only when asked for (see canonical).
    asked = b'"hosted":' + _dumps(hosted) + b"," if hosted else b""
    before = b"{" + asked + b"".join(_member(request, name) + b"," for name in _BEFORE) + b'"messages":['
    after = b"]" + b"".join(b"," + _member(request, name) for name in _AFTER) + b"}"
    if cache is not None:
        cache[key] = (tools, schema, before, after, hosted)
    return before, after


def _encoded(m: Message, cache: Cache) -> bytes:
    hit = cache.get(id(m))
    if hit is None or hit[0] is not m:
        hit = cache[id(m)] = (m, _dumps(_message(m)))
    return hit[1]


def canonical_bytes(request: ModelRequest, cache: Cache | None = None) -> bytes:
    """`canonical(request)` as canonical JSON, remembered secrets masked; `cache` keeps each message's (and the tool
    list's) encoding across the calls of a run, so a call encodes only what is new in it."""
    if cache is None:
        messages = b",".join(_dumps(_message(m)) for m in request.messages)
    else:
        # Inline: this loop runs for every message of every replayed call (bench/cassette_bench.py).
        parts = []
        get = cache.get
        for m in request.messages:
            hit = get(id(m))
            if hit is None or hit[0] is not m:
                hit = cache[id(m)] = (m, _dumps(_message(m)))
            parts.append(hit[1])
        messages = b",".join(parts)
    before, after = _around(request, cache)
    text = b"".join((before, messages, after))
    if known():
        text = mask_json(text.decode("utf-8", "surrogatepass")).encode("utf-8", "surrogatepass")
    return text


def canonical_text(request: ModelRequest) -> str:
    return canonical_bytes(request).decode("utf-8", "surrogatepass")


def key_of(text: bytes) -> str:
    return hashlib.sha256(text).hexdigest()[:32]


def request_key(request: ModelRequest, cache: Cache | None = None) -> str:
    """The SHA-256 (hex, 32 digits) of the canonical request: the same question gets the same key in any run."""
    return key_of(canonical_bytes(request, cache))


class RunKeys:
    """`request_key` for every call of one run, each the same key `request_key` gives, at the cost of what is new.

    A turn re-sends the conversation so far, so hashing each request whole costs a
    run N² bytes. Per conversation (a request's graph path) this keeps the hash of
    the canonical JSON up to the end of the messages its last call sent; a call
    whose messages begin with those same objects hashes only the rest. Anything
    else (a window that dropped messages, other settings, remembered secrets to
    mask across the whole text) is hashed whole, through the same cache.
    """

    __slots__ = ("cache", "_open")

    def __init__(self) -> None:
        self.cache: Cache = {}
        #: Per graph path: (the messages hashed, the JSON before them, the hash up to their end).
        self._open: dict[tuple[str, ...], tuple[tuple[Message, ...], bytes, Any]] = {}

    def key(self, request: ModelRequest) -> str:
        if known():  # masking is done on the whole text
            return request_key(request, self.cache)
        messages, cache = request.messages, self.cache
        before, after = _around(request, cache)
        last = self._open.get(request.path)
        if (
            last is not None
            and last[1] == before
            and len(last[0]) <= len(messages)
            and all(map(is_, last[0], messages))
        ):
            sent, digest = len(last[0]), last[2].copy()
        else:
            sent, digest = 0, hashlib.sha256(before)
        for n, m in enumerate(messages[sent:], sent):
            if n:
                digest.update(b",")
            digest.update(_encoded(m, cache))
        self._open[request.path] = (tuple(messages), before, digest.copy())
        digest.update(after)
        return digest.hexdigest()[:32]
