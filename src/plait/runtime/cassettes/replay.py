"""A cassette + a model request → the recorded reply, offline and unchanged; a request it has no recording of → a
loud failure naming the nearest recording and the first difference.

`ReplayProvider` stands in for a model's provider: it computes the request's
key (cassettes/request.py) and serves the recordings filed under it in the
order they were recorded, each run (`for_run`) from the first. The reply is
the recorded message itself (text, tool calls and their ids, usage, finish
reason), so a replayed run is the recorded run. A miss is a `ProviderError`
of kind `invalid_request` (no fallback is tried: another model would not have
a recording either) whose message says where the run asked, which recording
is nearest (same place in the run first, then the most of the request in
common) and the first field or message where the two differ.
"""

from __future__ import annotations

import copy
import json
from typing import Any, AsyncIterator

from ..history import message_from_json
from ..providers.base import (
    ModelRequest,
    ModelResponse,
    ProviderError,
    ResponseDone,
    StreamEvent,
    TextDelta,
    ToolCallStart,
    Usage,
)
from .file import COMPARABLE, Cassette, Interaction
from .request import Cache, canonical_text, request_key

__all__ = ["ReplayProvider", "first_difference"]

#: Characters of context a difference is shown with.
_BEFORE, _AFTER = 30, 70


class ReplayProvider:
    """One model's replies from a cassette; one cursor per request key, per run."""

    def __init__(self, cassette: Cassette, name: str) -> None:
        self.cassette = cassette
        self.name = name
        self._cursors: dict[str, int] = {}
        #: This run's messages, encoded once each (cassettes/request.py).
        self._cache: Cache = {}

    def for_run(self, journaled: bool = False) -> "ReplayProvider":
        view = copy.copy(self)
        view._cursors, view._cache = {}, {}
        return view

    def snapshot(self) -> dict[str, Any]:
        return {"cursors": dict(self._cursors)}

    def restore(self, snapshot: dict[str, Any]) -> None:
        self._cursors = {k: int(n) for k, n in (snapshot.get("cursors") or {}).items()}

    async def complete(self, request: ModelRequest) -> ModelResponse:
        return self._take(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        response = self._take(request)
        for part in response.message.content:
            yield TextDelta(part.text, part.phase)
        for call in response.message.tool_calls:
            yield ToolCallStart(call.id, call.name, call.arguments, request.step)
        yield ResponseDone(response)

    async def aclose(self) -> None:
        return None

    def _take(self, request: ModelRequest) -> ModelResponse:
        key = request_key(request, self._cache)
        recorded = self.cassette.by_key.get(key)
        index = self._cursors.get(key, 0)
        if not recorded or index >= len(recorded):
            raise ProviderError("invalid_request", self._miss(request, recorded), provider="cassette", model=self.name)
        self._cursors[key] = index + 1
        it = recorded[index]
        if it.error is not None:
            error = it.error
            raise ProviderError(
                str(error.get("kind") or "server_error"),
                str(error.get("message") or "recorded failure"),
                provider="cassette",
                model=self.name,
                status=error.get("status"),
            )
        reply = it.reply or {}
        usage = reply.get("usage") or (0, 0)
        return ModelResponse(
            message_from_json(reply["message"]),
            str(reply.get("finish_reason") or "stop"),
            reply.get("raw_finish_reason"),
            Usage(int(usage[0]), int(usage[1])),
            reply.get("model"),
            reply.get("response_id"),
            hosted=reply.get("hosted"),
        )

    def _miss(self, request: ModelRequest, recorded: list[Interaction] | None) -> str:
        where = f"agent `{request.agent}` at {'/'.join(request.path) or '?'} step {request.step}"
        name = self.cassette.source or "the cassette"
        if recorded:
            return (
                f"{name} has {len(recorded)} recording(s) of the request {where} made, and the run asked it again: "
                "record the cassette again"
            )
        asked = json.loads(canonical_text(request))
        lines = [f"{name} has no recording of the request {where} made (model `{request.model}`)"]
        nearest = _nearest(self.cassette.interactions, request, asked)
        if nearest is None:
            lines.append("the cassette has no recordings to compare it with")
        elif nearest.request is None:
            lines.append(f"nearest recording: {nearest.where} (recorded without its request, so nothing to compare)")
        elif nearest.request.get("form") == COMPARABLE:
            lines.append(f"nearest recording: {nearest.where}")
            exported = {k: v for k, v in nearest.request.items() if k != "form"}
            lines.extend(first_difference(exported, _comparable(request)))
        else:
            lines.append(f"nearest recording: {nearest.where}")
            lines.extend(first_difference(nearest.request, asked))
        if nearest is not None and nearest.model and nearest.model != self.name and lines[-1] == _ONLY_SECRETS:
            # The same request, recorded as another model's (a fallback's reply, say): that is the difference.
            lines[-1] = f"the requests differ in the model only: recorded for `{nearest.model}`, asked of `{self.name}`"
        lines.append("record the cassette again if the change is meant")
        return "\n".join(lines)


def _comparable(request: ModelRequest) -> dict[str, Any]:
    """A request as a journal describes it (store/requests.py), to compare with a recording exported from one."""
    from ..store.requests import comparable

    return {
        "system": request.system,
        "tools": [t.name for t in request.tools],
        "messages": [comparable(m) for m in request.messages],
    }


def _nearest(interactions: list[Interaction], request: ModelRequest, asked: dict[str, Any]) -> Interaction | None:
    path = "/".join(request.path)

    def score(it: Interaction) -> tuple[int, int, int, int]:
        same_place = it.path == path and it.step == request.step
        return (same_place, it.agent == request.agent, it.path == path, _common(it.request, asked))

    return max(interactions, key=score, default=None)


def _common(recorded: dict[str, Any] | None, asked: dict[str, Any]) -> int:
    """How much two requests share: equal fields, then equal leading messages."""
    if recorded is None:
        return 0
    same = sum(recorded.get(k) == v for k, v in asked.items() if k != "messages")
    messages = 0
    for a, b in zip(recorded.get("messages") or (), asked["messages"]):
        if a != b:
            break
        messages += 1
    return same + 10 * messages


def first_difference(recorded: dict[str, Any], asked: dict[str, Any]) -> list[str]:
    """Lines naming the first field, or message, where a recorded request and the one asked differ."""
    for field_name in asked:
        if field_name == "messages":
            continue
        if recorded.get(field_name) != asked[field_name]:
            return [f"first difference: `{field_name}`", *_values(recorded.get(field_name), asked[field_name])]
    old, new = recorded.get("messages") or [], asked["messages"]
    for n, (a, b) in enumerate(zip(old, new), 1):
        if a != b:
            role = b.get("role", "?")
            if a.get("role") == role and _text(a) != _text(b):
                return [f"first difference: message {n} ({role})", *_values(_text(a), _text(b))]
            return [f"first difference: message {n} ({role})", *_values(a, b)]
    if len(old) != len(new):
        return [f"first difference: the recorded request has {len(old)} message(s), this one {len(new)}"]
    return [_ONLY_SECRETS]


_ONLY_SECRETS = "the requests differ only in masked secrets"


def _text(message: dict[str, Any]) -> str:
    if "text" in message:  # the comparable form
        return str(message["text"])
    return "".join(p.get("text", "") for p in message.get("content") or ())


def _values(old: Any, new: Any) -> list[str]:
    a = old if isinstance(old, str) else json.dumps(old, sort_keys=True, ensure_ascii=False)
    b = new if isinstance(new, str) else json.dumps(new, sort_keys=True, ensure_ascii=False)
    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    start = max(0, at - _BEFORE)

    def window(text: str) -> str:
        shown = json.dumps(text[start : at + _AFTER], ensure_ascii=False)  # quoted, escapes visible
        return ("…" if start else "") + shown + ("…" if len(text) > at + _AFTER else "")

    return [f"  recorded: {window(a)}", f"  asked:    {window(b)}"]
