"""`thread NAME ["description"] { keep_last = N }` → its graph record and attribute schema (plait 0.3).

A thread is a conversation that runnables share or continue: an agent or a model step with `thread = NAME`
starts from the thread's messages, and what it said and heard is added to them when it finishes
(src/plait/runtime/threads.py).
"""

from __future__ import annotations

from typing import Any, ClassVar

from .base import Attr, Node, attr, kind_record

__all__ = ["MAX_KEEP_LAST", "ThreadNode", "thread_attr"]

#: The widest window a thread may keep: past this it bounds nothing a model could read.
MAX_KEEP_LAST = 10_000


@kind_record
class ThreadNode(Node):
    kind: ClassVar[str] = "thread"
    description: str | None = attr(default=None, drawn=True, doc="What the thread is for (its doc comment).")
    #: None keeps every message.
    keep_last: int | None = attr(
        drawn=True,
        default=None,
        spec=Attr("int", minimum=1, maximum=MAX_KEEP_LAST),
        contract=True,
        doc="The messages it keeps between turns, 1 to 10000 (a tool call is never kept without its result); "
        "default all.",
    )


def thread_attr() -> Any:
    """`thread = NAME` on an agent or a model step: the conversation it continues and adds to."""
    return attr(
        default=None,
        spec=Attr("ref", kinds=("thread",)),
        contract=True,
        doc="The `thread` whose messages it starts from and adds to (a conversation it shares).",
    )
