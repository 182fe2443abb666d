"""A failed attempt → how long to wait before the next one, or None to give up.

The policy of the providers' own SDKs: exponential backoff with jitter, the
server's `retry-after` honoured up to a cap, `x-should-retry` obeyed, and
failures that resending cannot fix (quota, auth, bad requests) never retried.
Everything runs inside the call's deadline: a wait that would cross it is not taken.
"""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any, Awaitable, Callable, TypeVar

from .base import ProviderError

__all__ = ["BACKOFF_MAX", "RETRY_AFTER_CAP", "RETRYABLE_KINDS", "backoff", "next_delay", "sleep", "with_retries"]

T = TypeVar("T")

#: Kinds a second identical request can survive.
RETRYABLE_KINDS = frozenset({"rate_limit", "server_error", "network", "timeout"})
BACKOFF_BASE = 0.5
BACKOFF_MAX = 8.0
#: A server asking for a longer wait than this is better answered by a fallback model.
RETRY_AFTER_CAP = 60.0

#: Indirection so tests can make waiting instant.
sleep = asyncio.sleep


def backoff(attempt: int, rand: Callable[[], float] = random.random) -> float:
    """Seconds before retry number `attempt + 1`: 0.5, 1, 2, 4, 8 (capped), each × a jitter in [0.75, 1]."""
    return min(BACKOFF_BASE * 2.0**attempt, BACKOFF_MAX) * (0.75 + 0.25 * rand())


def next_delay(err: ProviderError, attempt: int, retries: int, deadline: float | None) -> float | None:
    """The wait before another attempt, or None when `err` should be raised now."""
    if attempt >= retries:
        return None
    hint = getattr(err, "should_retry", None)
    if hint is False or (hint is None and err.kind not in RETRYABLE_KINDS):
        return None
    if err.retry_after is not None:
        if err.retry_after > RETRY_AFTER_CAP:
            return None
        delay = err.retry_after
    else:
        delay = backoff(attempt)
    if deadline is not None and time.monotonic() + delay >= deadline:
        return None
    return delay


async def with_retries(attempt: Callable[..., Awaitable[T]], retries: int, deadline: float | None, *args: Any) -> T:
    """Run `attempt(*args)` until it succeeds or `next_delay` says stop; the last error is raised."""
    tries = 0
    while True:
        try:
            return await attempt(*args)
        except ProviderError as err:
            delay = next_delay(err, tries, retries, deadline)
            if delay is None:
                raise
        tries += 1
        await sleep(delay)
