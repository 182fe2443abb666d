"""A JSON script of replies → deterministic model responses, offline.

`model demo = "scripted/demo" { script = "demo.replies.json" }`: the script is a
list of replies consumed in order by the calls to that model, or an object
mapping an agent or step name (`request.agent`), or a graph path
(`request.path`, e.g. "main/each/[2]/item": that place only, first), to its own list. A reply is
`{"text": ..., "output": {...}, "tool_calls": [{"name", "arguments" | "raw_arguments"}],
"finish_reason", "phase", "delay", "usage", "response_id", "created_at", "hosted", "error":
{"kind", "message", "after"}}`. `hosted` is what the call's hosted tools report, by kind:
`{"web_search": {"queries": [...], "citations": [{"url", "title", "text"}]}, "code_execution": {"runs":
[{"language", "code", "outcome", "output"}]}}` (a kind the call did not ask for is left out). `output` is a structured answer (sent as its JSON
text, as a provider's structured output is); `created_at` (unix seconds, default
now) dates a reply's server state. It speaks the same seam as the HTTP providers, streaming included,
so every runtime path (fallbacks, deltas, malformed calls) is testable offline.

Replies are consumed per run: every run (each row of a batch) reads the
script from its first reply, as `for_run` gives each run its own cursors. A
journaled run records its cursors with every reply, leaving out a call still
in flight elsewhere in the run, so a resume after a kill asks for exactly the
replies that were never recorded.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import re
import time
from contextvars import ContextVar
from typing import Any, AsyncIterator

from plait.core.kinds import ModelNode
from plait.core.paths import UnreadableFile, read_inside

from .base import (
    Message,
    ModelRequest,
    ModelResponse,
    ProviderError,
    ResponseDone,
    StreamEvent,
    TextDelta,
    TextPart,
    ToolCall,
    ToolCallDelta,
    ToolCallStart,
    Usage,
)
from .finish import normalise

__all__ = ["ScriptedProvider", "parse_duration", "words"]

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}
_WORD = re.compile(r"\S+\s*|\s+")


def parse_duration(value: Any) -> float:
    """`"50ms"`, `"2s"`, `0.5` → seconds."""
    if isinstance(value, (int, float)):
        return float(value)
    match = _DURATION.match(str(value))
    if match is None:
        raise ValueError(f"not a duration: {value!r}")
    return float(match.group(1)) * _UNIT[match.group(2)]


def words(text: str) -> list[str]:
    """Text split the way models stream it: a word and its following space per delta."""
    return _WORD.findall(text)


#: The (provider, list key) of each reply the current task took since its last snapshot: its own snapshot, taken
#: next to record the call (reply or error), counts them; a snapshot taken in another task leaves them out while
#: they are in flight. A tuple, as a fallback may take from another model before the call is recorded.
_TAKEN: ContextVar[tuple[tuple[int, str], ...]] = ContextVar("plait_scripted_taken", default=())


class ScriptedProvider:
    """Replies from a script; one cursor per list, per run (`for_run`), else shared by every caller."""

    def __init__(self, config: ModelNode, client: Any = None, *, replies: Any = None, root: str | None = None) -> None:
        self.name = config.name
        self.config = config
        #: The folder the replies file must lie inside (the spec's folder); None: the working directory.
        self.root = root
        self._script = replies
        self._source: ScriptedProvider | None = None
        #: List key (an agent's name, or "" for a plain list) -> replies taken.
        self._cursors: dict[str, int] = {}
        self._calls = 0
        #: Lists whose reply is taken but not yet recorded by the task that took it (journaled runs only).
        self._inflight: dict[str, int] = {}
        self._journaled = False

    def for_run(self, journaled: bool = False) -> "ScriptedProvider":
        """A view of this model for one run: the same script (read once), cursors of its own."""
        # Of the same class: a subclass (a test's recording provider, a user's own) keeps its behaviour per run.
        view = copy.copy(self)
        view._cursors, view._calls, view._inflight = {}, 0, {}
        view._source = self
        view._journaled = journaled
        return view

    # -- the seam ----------------------------------------------------------------

    async def complete(self, request: ModelRequest) -> ModelResponse:
        reply = self._next(request)
        if reply.get("delay"):
            await asyncio.sleep(parse_duration(reply["delay"]))
        error = reply.get("error")
        if error:
            raise self._error(error)
        return self._response(reply, request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        reply = self._next(request)
        if reply.get("delay"):
            await asyncio.sleep(parse_duration(reply["delay"]))
        error: dict[str, Any] = reply.get("error") or {}
        fail_after = int(error.get("after", 0)) if error else None
        if error and fail_after == 0:
            raise self._error(error)
        response = self._response(reply, request)
        emitted = 0
        for event in self._events(response, request.step):
            if fail_after is not None and emitted >= fail_after:
                raise self._error(error)
            yield event
            emitted += 1
        if fail_after is not None:
            raise self._error(error)
        yield ResponseDone(response)

    async def aclose(self) -> None:
        return None

    # -- persistence: a restored run must read the same replies next -------------

    def snapshot(self) -> dict[str, Any]:
        """The cursors as a restored run must have them: a call still in flight in another task is left out."""
        taken = _TAKEN.get()
        mine = [key for owner, key in taken if owner == id(self)]
        if mine:
            for key in mine:
                self._inflight[key] = max(0, self._inflight.get(key, 0) - 1)
            _TAKEN.set(tuple(t for t in taken if t[0] != id(self)))
        cursors = {key: n - self._inflight.get(key, 0) for key, n in self._cursors.items()}
        return {"cursors": cursors, "calls": self._calls - sum(self._inflight.values())}

    def restore(self, snapshot: dict[str, Any]) -> None:
        self._inflight.clear()
        self._cursors = {key: int(n) for key, n in snapshot.get("cursors", {}).items()}
        self._calls = int(snapshot.get("calls", 0))

    # -- internals -----------------------------------------------------------------

    def _load(self) -> Any:
        if self._script is None and self._source is not None:
            self._script = self._source._load()  # read once per engine, not once per run
        if self._script is None:
            path = self.config.script
            if not path:
                raise ProviderError(
                    "invalid_request", "scripted model has no `script` file", provider="scripted", model=self.name
                )
            # As `plait check` has it: inside the spec's folder (the working directory for a config built by
            # hand), and only a regular file under the cap: /dev/zero or a FIFO is refused, never read or waited on.
            root = self.root or os.getcwd()
            try:
                self._script = json.loads(read_inside(path, root))
            except UnreadableFile as exc:
                # The path is not echoed: the rule says what is wrong, and a path can hold a pasted secret.
                raise ProviderError(
                    "invalid_request", f"script of model `{self.name}` {exc}", provider="scripted", model=self.name
                ) from None
            except (OSError, ValueError, RecursionError) as exc:
                raise ProviderError(
                    "invalid_request", f"cannot read script `{path}`: {exc}", provider="scripted", model=self.name
                ) from None
        return self._script

    def _next(self, request: ModelRequest) -> dict[str, Any]:
        script = self._load()
        who = request.agent or "?"
        if isinstance(script, dict):
            # A graph path ("main/each/[2]/item") names one place in the run, so calls side by side (map items,
            # parallel branches) each read their own list whatever the timing; else the agent's or step's name.
            where = "/".join(request.path)
            key = where if where and where in script else who
            replies = script.get(key)
            if replies is None:
                raise ProviderError(
                    "invalid_request",
                    f"script of model `{self.name}` has no replies for agent `{who}`",
                    provider="scripted",
                    model=self.name,
                )
        else:
            key, replies = "", script
        index = self._cursors.get(key, 0)
        if index >= len(replies):
            raise ProviderError(
                "invalid_request",
                f"script of model `{self.name}` is used up: agent `{who}` asked for reply {index + 1} "
                f"but the script has {len(replies)}",
                provider="scripted",
                model=self.name,
            )
        self._cursors[key] = index + 1
        self._calls += 1
        if self._journaled:
            self._inflight[key] = self._inflight.get(key, 0) + 1
            _TAKEN.set((*_TAKEN.get(), (id(self), key)))
        reply = replies[index]
        return reply if isinstance(reply, dict) else {"text": str(reply)}

    def _error(self, error: dict[str, Any]) -> ProviderError:
        kind = error.get("kind", "server_error")
        return ProviderError(
            kind,
            error.get("message", f"scripted {kind}"),
            provider="scripted",
            model=self.name,
            status=error.get("status"),
        )

    def _response(self, reply: dict[str, Any], request: ModelRequest) -> ModelResponse:
        calls = [self._call(raw, i) for i, raw in enumerate(reply.get("tool_calls") or ())]
        text = reply.get("text")
        if "output" in reply and text is None:
            text = json.dumps(reply["output"], ensure_ascii=False)
        content = [TextPart(text, reply.get("phase"))] if text else []
        for extra in reply.get("parts") or ():
            content.append(TextPart(extra["text"], extra.get("phase")))
        reason = reply.get("finish_reason")
        if reason is None:
            reason = normalise({}, None, calls)
        usage = reply.get("usage")
        if usage is not None:
            usage = Usage(int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0)))
        else:
            # A deterministic stand-in so reports show token counts offline.
            seen = sum(len(p.text) for m in request.messages for p in m.content)
            usage = Usage(1 + seen // 4, 1 + sum(len(p.text) for p in content) // 4 + 8 * len(calls))
        created = reply.get("created_at")
        message = Message(
            "assistant",
            content,
            calls,
            model=self.name,
            response_id=reply.get("response_id"),
            created_at=float(created) if created is not None else time.time(),
        )
        return ModelResponse(
            message,
            reason.lower(),
            raw_finish_reason=reason,
            usage=usage,
            model=self.name,
            response_id=reply.get("response_id"),
            hosted=_hosted(reply, request) if request.hosted else None,
        )

    def _call(self, raw: dict[str, Any], index: int) -> ToolCall:
        call_id = raw.get("id") or f"{self.name}-{self._calls}-{index + 1}"
        if "raw_arguments" in raw:
            text = raw["raw_arguments"]
            try:
                parsed = json.loads(text)
                if not isinstance(parsed, dict):
                    raise ValueError("arguments must be an object")
            except ValueError:
                return ToolCall(call_id, raw["name"], None, text, malformed=True)
            return ToolCall(call_id, raw["name"], parsed, text)
        arguments = raw.get("arguments") or {}
        return ToolCall(call_id, raw["name"], arguments, json.dumps(arguments))

    @staticmethod
    def _events(response: ModelResponse, step: int) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        for part in response.message.content:
            # Word-sized chunks, so consumers see a real sequence of deltas.
            for chunk in words(part.text):
                events.append(TextDelta(chunk, part.phase))
        for call in response.message.tool_calls:
            raw = call.raw_arguments
            cut = max(1, len(raw) // 2)
            for fragment in (raw[:cut], raw[cut:]):
                if fragment:
                    events.append(ToolCallDelta(call.id, fragment, step))
            events.append(ToolCallStart(call.id, call.name, call.arguments, step))
        return events


def _hosted(reply: dict[str, Any], request: ModelRequest) -> dict[str, Any]:
    """What a scripted reply says the request's hosted tools found; an empty report for each it does not name."""
    from plait.core.hosted import empty_report

    said = reply.get("hosted") or {}
    reports: dict[str, Any] = {}
    for run in request.hosted:
        kind = run["hosted"]
        reports[kind] = {**empty_report(kind), **(said.get(kind) or {})}
    return reports
