"""A runnable's `thread` → the messages its conversation starts from, and what its finished turn leaves there.

A thread (plait 0.3, `thread NAME { keep_last = N }`) is one conversation that
agents and model steps continue in turn: `ctx.threads` holds each thread's
messages by name. A runnable with `thread = NAME` starts from a copy of them
and, when it finishes, leaves its whole turn (its prompt, the model's replies,
tool calls and their results) in the thread, cut to the thread's `keep_last`
pair-aware (`history.window`: a tool result never outlives its call). A turn
that fails or stops for a person leaves the thread as it was until it
finishes.

Each write is journaled as a `thread` decision at the writer's graph path,
holding the thread's messages after it. A resume walks through the write again
and takes the journaled messages rather than its own, so the conversation it
continues is exactly the one the earlier attempt had; `plait trace` shows each
write.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .history import from_json, to_json, window
from .providers.base import Message

if TYPE_CHECKING:
    from .context import RunContext

__all__ = ["history_of", "leave"]


def history_of(ctx: RunContext, name: str) -> list[Message]:
    """The thread's messages so far (a copy: the reader's turn is added only when it finishes)."""
    return list(ctx.threads.get(name, ()))


def leave(ctx: RunContext, name: str, path: tuple[str, ...], by: str, messages: list[Message], before: int) -> None:
    """`messages` (the thread's `before` messages and the turn `by` added) become the thread, cut to its keep_last."""
    key = "/".join(path) + "#thread"
    journal = ctx.journal
    if journal is not None:
        recorded = journal.decision("thread", key)
        if recorded is not None:  # a resume walking through a write the earlier attempt journaled
            ctx.threads[name] = from_json(recorded["messages"])
            return
    record = ctx.program.threads.get(name)
    kept = window(messages, record.keep_last if record is not None else None)
    ctx.threads[name] = kept
    if journal is not None:
        data: dict[str, Any] = {
            "name": name,
            "path": list(path),
            "by": by,
            "added": len(messages) - before,
            "dropped": len(messages) - len(kept),
            "messages": to_json(kept),
        }
        journal.record_decision("thread", data, key)
