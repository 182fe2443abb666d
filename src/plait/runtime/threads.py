"""A runnable's `thread` → the messages its conversation starts from, and what its finished turn leaves there.

A thread (plait 0.3, `thread NAME { keep_last = N }`) is one conversation that
agents and model steps continue in turn: `ctx.threads` holds each thread's
messages by name. A runnable with `thread = NAME` starts from a copy of them
and, when it finishes, leaves its whole turn (its prompt, the model's replies,
tool calls and their results) in the thread, cut to the thread's `keep_last`
pair-aware (`history.window`: a tool result never outlives its call). A turn
that fails or stops for a person leaves the thread as it was until it
finishes.

Each reader sees the thread as one with its tools may (`history_of`): a call
of a tool it does not have (another agent's turn) is told as text, since a
provider refuses a tool call whose tool it was not given; the thread itself
keeps the calls as they were.

Each write is journaled as a `thread` decision at the writer's graph path,
holding the thread's messages after it. A resume walks through the write again
and takes the journaled messages rather than its own, so the conversation it
continues is exactly the one the earlier attempt had; `plait trace` shows each
write.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Collection

from .history import from_json, to_json, window
from .providers.base import Message, TextPart

if TYPE_CHECKING:
    from .context import RunContext

__all__ = ["history_of", "leave"]


def history_of(ctx: RunContext, name: str, tools: Collection[str] = ()) -> list[Message]:
    """The thread's messages as a reader with `tools` sees them (a copy: its turn is added when it finishes).

    A call of a tool the reader does not have (another agent's, in a shared transcript) is told as text: the
    call on its assistant message, its result as a user message. A provider refuses a tool call it was not
    given the tool for, and a model must not think it can call it again. One message stays one message."""
    messages = list(ctx.threads.get(name, ()))
    foreign = {c.id: c.name for m in messages for c in m.tool_calls if c.name not in tools}
    if not foreign:
        return messages
    seen: list[Message] = []
    for m in messages:
        if m.role == "tool" and m.tool_call_id in foreign:
            told = f"(`{foreign[m.tool_call_id]}` answered{' with an error' if m.is_error else ''}: {m.text})"
            seen.append(Message.user(told))
        elif any(c.id in foreign for c in m.tool_calls):
            calls = [c for c in m.tool_calls if c.id in foreign]
            lines = [f"(called `{c.name}` with {json.dumps(c.arguments, ensure_ascii=False)})" for c in calls]
            text = "\n".join(filter(None, [m.text, *lines]))
            kept = [c for c in m.tool_calls if c.id not in foreign]
            seen.append(replace(m, content=[TextPart(text)], tool_calls=kept))
        else:
            seen.append(m)
    return seen


def leave(ctx: RunContext, name: str, path: tuple[str, ...], by: str, turn: list[Message]) -> None:
    """The thread's messages, then `turn` (what `by` added), become the thread, cut to its keep_last."""
    key = "/".join(path) + "#thread"
    journal = ctx.journal
    if journal is not None:
        recorded = journal.decision("thread", key)
        if recorded is not None:  # a resume walking through a write the earlier attempt journaled
            ctx.threads[name] = from_json(recorded["messages"])
            return
    messages = [*ctx.threads.get(name, ()), *turn]
    record = ctx.program.threads.get(name)
    kept = window(messages, record.keep_last if record is not None else None)
    ctx.threads[name] = kept
    if journal is not None:
        data: dict[str, Any] = {
            "name": name,
            "path": list(path),
            "by": by,
            "added": len(turn),
            "dropped": len(messages) - len(kept),
            "messages": to_json(kept),
        }
        journal.record_decision("thread", data, key)
