"""Batch rows → a small pool of async Ray actors, each hosting many concurrent runs; results streamed to the driver.

Each actor builds its own engine (its own journal connection: the journal is
what the actors share, so it must be one every actor reaches: SQLite in the
project folder on one machine, PostgreSQL across machines) and runs its
share of `concurrency` rows at once on its event loop. The driver sends rows
in chunks (one streaming call per chunk, so a call's cost is shared by its
rows), each actor receiving the same number of chunk streams, and hands each
result on the moment the actor yields it, whatever its chunk is still doing.
Ray never re-runs anything on its own (no actor restarts, no task retries): a
run cut off by a dead actor is resumed from the journal the next time the
batch runs, which replays what finished and pauses a non-idempotent call in
flight.

Ray is imported only here, and only when `--executor ray` is chosen (the
`plait[ray]` extra).
"""

from __future__ import annotations

import asyncio
import logging
import os
from itertools import islice
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable

from ..batch import Row, RowResult, all_or_none, run_row

if TYPE_CHECKING:
    from ..engine import Engine

__all__ = ["DEFAULT_ACTORS", "RayUnavailable", "RowHost", "missing", "run_batch", "spec_engine"]

DEFAULT_ACTORS = 2
#: Rows per remote call at most: one call's cost shared among them, results still streamed one by one.
_CHUNK = 16
_AGAIN = "run the batch again to resume it"
#: How long the driver waits for the actors to flush their journals before it stops them.
_CLOSE_SECONDS = 30.0


class RayUnavailable(Exception):
    """Ray is not installed, or the cluster cannot be reached."""


def missing() -> str | None:
    """Why the ray executor cannot run here (Ray not installed), or None."""
    try:
        import ray  # noqa: F401
    except ImportError:
        return "the ray executor needs Ray: pip install -e '.[ray]' in plait's clone"
    return None


def spec_engine(spec: str, store: str | None = None) -> Engine:
    """The engine an actor hosts: the spec compiled in the actor's own process, journaled in `store` (a URL)."""
    from pathlib import Path

    from ..engine import Engine

    options: dict[str, Any] = {} if store is None else {"store": store}
    return Engine.from_spec(Path(spec), **options)


class RowHost:
    """One actor: an engine that runs many rows at once on the actor's event loop."""

    def __init__(
        self,
        make_engine: Callable[[], Engine],
        entry: str | None,
        accept_changes: bool = False,
        budget: dict[str, Any] | None = None,
    ) -> None:
        self.engine = make_engine()
        self.entry = entry
        self.accept_changes = accept_changes
        self.budget = budget

    async def run(self, row: dict[str, Any]) -> dict[str, Any]:
        row_result = await run_row(
            self.engine, Row.from_dict(row), self.entry, accept_changes=self.accept_changes, budget=self.budget
        )
        return row_result.to_dict()

    async def run_many(self, rows: list[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
        """Rows at once, each result yielded the moment its run stops (a Ray streaming generator).

        One remote call carries a chunk of rows, so its cost is shared among them; cancelling the call
        cancels the runs still going (each is stored as it stops).
        """
        tasks = [asyncio.ensure_future(self.run(row)) for row in rows]
        try:
            for finished in asyncio.as_completed(tasks):
                yield await finished
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def close(self) -> None:
        """Stops and rows buffered in the journal go to its tables before the actor is ended."""
        await self.engine.aclose()


def _connect(address: str | None, actors: int) -> bool:
    """Ray up (a new local instance, or the cluster at `address`); True when this call started it."""
    import ray

    if ray.is_initialized():
        return False
    try:
        if address:
            ray.init(address=address, logging_level=logging.WARNING)
        else:
            # A scheduling number, not a cap on work: each actor asks for one CPU to be placed.
            ray.init(num_cpus=max(actors, os.cpu_count() or 1), include_dashboard=False, logging_level=logging.WARNING)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = f"the Ray cluster at {address}" if address else "a local Ray instance"
        raise RayUnavailable(f"cannot start or reach {where}: {exc}") from None
    return True


async def run_batch(
    make_engine: Callable[[], Engine],
    rows: list[Row],
    emit: Callable[[RowResult], None],
    *,
    concurrency: int,
    actors: int = DEFAULT_ACTORS,
    entry: str | None = None,
    accept_changes: bool = False,
    address: str | None = None,
    stop: asyncio.Event | None = None,
    budget: dict[str, Any] | None = None,
) -> None:
    """Every row to run, on `actors` Ray actors that each build their engine with `make_engine` (picklable)."""
    if not rows:  # every row finished already (or none): no Ray to start
        return
    import ray

    started = _connect(address, actors)
    actors = max(1, min(actors, len(rows)))
    share = -(-concurrency // actors)
    host_class = ray.remote(max_restarts=0, max_task_retries=0)(RowHost)
    hosts: list[Any] = [
        host_class.options(max_concurrency=share + 1).remote(make_engine, entry, accept_changes, budget)
        for _ in range(actors)
    ]
    #: Actors that died (a crash in user code, out of memory, a failed start): no row goes to them again.
    dead: set[int] = set()
    rest = iter(rows)

    async def feeder(slot: int, size: int) -> None:
        """Chunks of `size` rows, one streaming call each, to actor `slot % actors` (another if it died)."""
        while stop is None or not stop.is_set():
            chunk = list(islice(rest, size))
            if not chunk:
                return
            live = [i for i in range(actors) if i not in dead]
            if not live:
                for row in chunk:
                    emit(RowResult.refused(row, "executor_failed", "every Ray actor of this batch has died; " + _AGAIN))
                continue
            chosen = slot % actors if slot % actors in live else live[slot % len(live)]
            waiting = {row.index: row for row in chunk}
            stream = hosts[chosen].run_many.remote([row.to_dict() for row in chunk])
            try:
                async for ref in stream:
                    result = RowResult.from_dict(await ref)
                    waiting.pop(result.index, None)
                    emit(result)
            except asyncio.CancelledError:
                ray.cancel(stream)  # the actor cancels the runs' tasks: each run is stored as it stops
                raise
            except ray.exceptions.RayError as exc:
                # The journal knows how far each run got: the next run of the batch resumes it from there.
                if isinstance(exc, ray.exceptions.RayActorError):
                    dead.add(chosen)
                message = f"the Ray actor running this row failed ({_first_line(exc)}); " + _AGAIN
                for row in waiting.values():
                    emit(RowResult.refused(row, "executor_failed", message))

    # Chunks of up to _CHUNK rows, at least two streams per actor (so an actor keeps working while one
    # stream waits for its slowest row); the chunk sizes add up to `concurrency`, the bound on runs in flight.
    size = max(1, min(_CHUNK, concurrency // (2 * actors)))
    sizes = [size] * (concurrency // size) + ([concurrency % size] if concurrency % size else [])
    try:
        await all_or_none([asyncio.ensure_future(feeder(slot, n)) for slot, n in enumerate(sizes)])
    finally:
        await _close(hosts)
        if started:
            ray.shutdown()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


async def _close(hosts: list[Any]) -> None:
    import ray

    if not hosts:
        return
    try:
        await asyncio.wait_for(
            asyncio.gather(*(h.close.remote() for h in hosts), return_exceptions=True), _CLOSE_SECONDS
        )
    except (asyncio.TimeoutError, asyncio.CancelledError):
        pass  # a run's rows were durable before each of its side effects; the next run of the batch reads them
    finally:
        for host in hosts:
            ray.kill(host)
