"""A journaled run and a step in it → a new run that replays its history up to that step and goes on live from there.

A step is named as `plait trace` shows it: a journal position (a model call
`PATH#N`, a tool call `PATH#N:CALL_ID`, a route, loop, map or ask decision
`PATH`, `PATH#ITERATION`, `PATH[INDEX]`), or a row number (`trace --json`'s
`seq`). The fork keeps every row before the first row at that step, except a
call whose reply or completion came only after it (in flight at that moment:
it runs again) and the source's stops, pauses and resumes; then resumes like
any stored run (pinned to the spec it goes on under). Replay is by position,
so the kept calls are served from the copied rows (cached: no provider is
asked, no tool runs again) and the step itself and everything after it run
live.

`progress` reads from a run's rows what its spec check needs (compiler/pin.py's
`affecting`): which declarations the rows show at work, and where the run
stands (what runs again when it goes on).
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, Any

from ..errors import AgentError

if TYPE_CHECKING:
    from ..engine import Engine

__all__ = ["cut_at", "fork", "forked_rows", "progress", "steps"]

#: History rows a fork does not copy: the source's own stops and comings back.
_SOURCE_ONLY = ("stop", "resume", "pause", "fork")
#: Rows that start a call, and those that end one.
_STARTS = {"model_request": ("model_reply", "model_error"), "tool_intent": ("tool_completed",)}
_ENDS = {"model_reply", "model_error", "tool_completed"}


def steps(events: list[dict[str, Any]]) -> list[str]:
    """Every step a fork can start at, in the order the run reached them: the positions of its calls and decisions."""
    seen: dict[str, None] = {}
    for e in events:
        if e["key"] and e["kind"] in ("model_request", "tool_intent", "decision"):
            seen.setdefault(e["key"], None)
    return list(seen)


def cut_at(events: list[dict[str, Any]], at: str) -> int:
    """The row number the fork's history stops before; AgentError `fork_invalid` naming the valid steps when `at`
    names none."""
    if at.isdigit():
        seq = int(at)
        if any(e["seq"] == seq for e in events) and seq > 1:
            return seq
    for e in events:
        if e["key"] == at and e["kind"] in ("model_request", "tool_intent", "decision"):
            return e["seq"]
    valid = steps(events)
    shown = ", ".join(valid[:40]) + (f" ... ({len(valid) - 40} more)" if len(valid) > 40 else "")
    raise AgentError(
        "fork_invalid",
        f"no step `{at}` in the run: give a position `plait trace` shows, or a row number above 1; "
        f"its steps are: {shown or 'none (the run made no call and took no decision)'}",
    )


def forked_rows(events: list[dict[str, Any]], cut: int, fresh: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """The history a fork starts from: the rows before `cut`, without calls still in flight then, renumbered.
    `fresh`: models served by another model in the fork, whose recorded provider state (a scripted model's place
    in its script) does not carry over to it."""
    kept = [e for e in events if e["seq"] < cut and e["kind"] not in _SOURCE_ONLY]
    ended = {(e["kind"], e["key"]) for e in kept if e["kind"] in _ENDS}
    out: list[dict[str, Any]] = []
    now = time.time()
    for e in kept:
        ends = _STARTS.get(e["kind"])
        if ends is not None and not any((end, e["key"]) in ended for end in ends):
            continue  # in flight at the cut: the fork makes the call itself
        data = e["data"]
        if fresh and isinstance(data, dict) and isinstance(data.get("providers"), dict):
            data = data | {"providers": {k: v for k, v in data["providers"].items() if k not in fresh}}
        out.append({"seq": len(out) + 1, "kind": e["kind"], "key": e["key"], "at": now, "data": data})
    return out


def fork(
    engine: Engine, source: dict[str, Any], events: list[dict[str, Any]], at: str, fresh: frozenset[str] = frozenset()
) -> str:
    """A new run in the engine's journal, made of the source run's row and its rows forked at `at` and pinned to the
    engine's spec; its id. It is stored, not started: resume it (`Engine.restore(id)`) to go on from the step."""
    from ..engine import new_run_id

    store = engine.store
    if store is None:
        raise AgentError("fork_invalid", "forking a run needs a run journal")
    rows = forked_rows(events, cut_at(events, at), fresh)
    rows.append(
        {"seq": len(rows) + 1, "kind": "fork", "key": None, "at": time.time(), "data": {"from": source["id"], "at": at}}
    )
    run_id = new_run_id()
    store.import_run(run_id, source["entry"], engine.spec, source["input"], None, rows)
    if engine.pinned is not None:
        store.pin(run_id, *engine.pinned)
        store.flush()
    return run_id


_INDEX = re.compile(r"(#\d+|~\d+|\[\d+\])+$")


def _names(key: str) -> set[str]:
    """The declarations a position names: `main/pick/polish/#1/writer#2:call_1` → main, pick, polish, writer."""
    out = set()
    for part in key.split(":", 1)[0].split("/"):
        name = _INDEX.sub("", part)
        if name:
            out.add(name)
    return out


def progress(events: list[dict[str, Any]]) -> tuple[set[str], set[str]]:
    """(what the rows show at work, the runnables on the paths where the run stands) of a run's rows: a stored
    run's, or a fork's copied history (the step it starts at is its last row, `fork`)."""
    ran: set[str] = set()
    live: set[str] = set()
    started: dict[tuple[str, str], str] = {}
    last: str | None = None
    stop: dict[str, Any] | None = None
    at: set[str] = set()
    for e in events:
        kind, key, data = e["kind"], e["key"], e["data"] if isinstance(e["data"], dict) else {}
        if kind == "stop":
            stop = data
            continue
        if kind == "resume":  # went on after that stop: where it stands is what follows
            stop = None
            continue
        if kind == "fork":  # a fork that has not gone on yet stands at the step it starts at
            at = _names(str(data.get("at") or ""))
            continue
        if not key:
            continue
        at = set()
        last = key
        ran |= _names(key)
        if kind in _STARTS:
            started[(kind, key)] = key
            ran.update(v for v in (data.get("tool"), data.get("model")) if isinstance(v, str))
        elif kind in _ENDS:
            started.pop(("model_request" if kind != "tool_completed" else "tool_intent", key), None)
    live |= at
    for key in started.values():  # in flight when the run stopped: where it stands
        live |= _names(key)
    if stop is not None:
        for pending in stop.get("pending") or ():
            if isinstance(pending, dict) and isinstance(pending.get("id"), str):
                live |= _names(pending["id"])
    if at:
        pass  # a fork about to start: its step is where it stands, not the row before it
    elif last is not None and (stop is None or stop.get("stop_reason") in ("error", "cancelled", "max_steps")):
        live |= _names(last)  # killed, failed or stopped there (a stop for a person names its pending calls)
    return ran, live
