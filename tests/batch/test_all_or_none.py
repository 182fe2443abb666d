"""runtime.batch.all_or_none: an executor's tasks → all finished, or all stopped before the executor returns."""

from __future__ import annotations

import asyncio

import pytest

from plait.runtime.batch import all_or_none


async def _forever(stopped: list[str], name: str) -> None:
    try:
        await asyncio.sleep(3600)
    except asyncio.CancelledError:
        stopped.append(name)
        raise


async def _fail() -> None:
    await asyncio.sleep(0)
    raise RuntimeError("row machinery broke")


def test_every_task_runs_to_its_end():
    done: list[int] = []

    async def work(i: int) -> None:
        await asyncio.sleep(0)
        done.append(i)

    async def main() -> None:
        await all_or_none([asyncio.ensure_future(work(i)) for i in range(5)])

    asyncio.run(main())
    assert sorted(done) == [0, 1, 2, 3, 4]


def test_a_failing_task_stops_the_others_before_the_error_is_raised():
    stopped: list[str] = []

    async def main() -> None:
        tasks = [asyncio.ensure_future(_forever(stopped, "a")), asyncio.ensure_future(_fail())]
        with pytest.raises(RuntimeError, match="row machinery broke"):
            await all_or_none(tasks)
        assert all(t.done() for t in tasks)

    asyncio.run(main())
    assert stopped == ["a"]


def test_cancelling_the_caller_cancels_every_task_and_waits_for_them():
    stopped: list[str] = []

    async def main() -> None:
        tasks = [asyncio.ensure_future(_forever(stopped, n)) for n in ("a", "b")]
        waiter = asyncio.ensure_future(all_or_none(tasks))
        await asyncio.sleep(0.01)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        assert all(t.cancelled() for t in tasks)

    asyncio.run(main())
    assert sorted(stopped) == ["a", "b"]
