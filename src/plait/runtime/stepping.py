"""A running coroutine and its event bus → an async iterator of events (`async for event in run`).

Events are queued as they are emitted and yielded in order; the iterator ends
when the coroutine does, and a failure inside it is re-raised to the reader.
"""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, Awaitable, Callable

from .events import Event, EventBus

__all__ = ["iterate"]


async def iterate(bus: EventBus, start: Callable[[], Awaitable[Any]]) -> AsyncIterator[Event]:
    queue: asyncio.Queue[Event | None] = asyncio.Queue()
    listener = queue.put_nowait
    bus.listen(listener)
    task = asyncio.ensure_future(start())
    task.add_done_callback(lambda _t: queue.put_nowait(None))
    try:
        while True:
            event = await queue.get()
            if event is None:
                break
            yield event
        task.result()
    finally:
        bus.listeners.remove(listener)
        bus.active = bool(bus.listeners or bus.observers)
        if not task.done():
            task.cancel()
