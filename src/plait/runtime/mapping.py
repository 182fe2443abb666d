"""A map, its input and a graph path → the outcome of running its body once per item of a list, in item order.

At most `concurrency` items run at once: that many workers take the next
unfinished index in turn (one task per worker, not per item). Each item runs
at `path/[i]` with `{{input}}` = the item and a frame holding `map.index`,
`map.item` and its own table of finished outputs. `on_error = fail`: the first
failure cancels the other workers and the map waits for them, so no task
outlives it; `collect`: the failed item's slot holds `{"error": ...}`; `drop`:
the failed item is left out of the list. A `filter` is decided per item before
any runs: an item it does not hold for is skipped (not run, not in the list,
recorded as a `skipped` decision); `map.index` stays the item's place in the
whole list. Finished
items are kept in the run's progress (by index), so a resumed map runs only
the items that had not finished; each item's result is a report decision.
"""

from __future__ import annotations

import asyncio
from typing import Any

from plait.core.kinds import MapNode
from .conditions import ConditionError, holds
from .context import RunContext
from .errors import AgentError, error_info
from .loop import ChainRunner
from .outcomes import Done, Fail, Outcome, merge_stops
from .route import Runner
from .scope import FRAME, Frame, PathError, as_record, outputs, resolve

__all__ = ["run_map"]


async def run_map(
    ctx: RunContext,
    cfg: MapNode,
    input: Any,
    path: tuple[str, ...],
    branch: str | None,
    run: Runner,
    chain: ChainRunner,
) -> Outcome:
    key = "/".join(path)
    try:
        items = resolve(ctx, cfg.over, input)
    except PathError as exc:
        raise AgentError("map_over_missing", f"map `{cfg.name}`: {exc}", path=path) from None
    items = as_record(items)  # text that is a JSON list (an untyped step's answer, a plain --input) is that list
    if not isinstance(items, list):
        raise AgentError(
            "map_over_not_list",
            f"map `{cfg.name}`: `{'.'.join(cfg.over)}` is {type(items).__name__}, not a list",
            path=path,
        )
    if cfg.max_items is not None and len(items) > cfg.max_items:
        # Refused whole, before any item runs: `max_items` is what the spec's cost bound was computed from.
        raise AgentError(
            "map_too_long",
            f"map `{cfg.name}`: `{'.'.join(cfg.over)}` has {len(items)} items, more than max_items = {cfg.max_items}",
            path=path,
        )
    progress = ctx.progress.get(key)
    if progress is None:
        progress = ctx.progress[key] = {"kind": "map", "done": {}}
    # Indexes are ints here; a stored snapshot's JSON object keys come back as text.
    done: dict[int, Any] = {int(i): v for i, v in progress["done"].items()}
    progress["done"] = done
    # Items dropped after failing (`on_error = drop`): a resume does not run them again.
    dropped: set[int] = set(progress.get("dropped", ()))
    kept = _kept(ctx, cfg, items, path, key) if cfg.filter is not None else range(len(items))
    if ctx.journal is not None and cfg.on_error != "fail":
        # An item an earlier attempt saw fail stays failed (collected, or dropped): a resume does not run it again.
        for index in kept:
            recorded = ctx.journal.decision("map", f"{key}[{index}]") if index not in done else None
            if recorded is not None and recorded.get("status") == "error":
                ctx.report.decisions.append(recorded)
                if cfg.on_error == "drop":
                    dropped.add(index)
                else:
                    done[index] = {"error": recorded.get("error")}
    todo = iter([i for i in kept if i not in done and i not in dropped])
    parent = FRAME.get()
    table = outputs(ctx)
    loop_frame = parent.loop if parent is not None else None
    named = (parent.named or {}) if parent is not None else {}
    fail_fast = cfg.on_error == "fail"
    stops: list[Outcome] = []
    failure: list[tuple[int, Fail]] = []
    workers: list[asyncio.Task[None]] = []
    active = ctx.bus.active
    where = list(path)  # one list for every item's decision record
    body = cfg.body
    single = body[0] if len(body) == 1 else None

    loop = asyncio.get_running_loop()
    # The workers report here as they end; the map wakes once, when the last is out (or one failed fast).
    finished: asyncio.Future[None] = loop.create_future()
    left = 0

    async def work() -> None:
        nonlocal left
        try:
            for index in todo:
                item = items[index]
                scope = {"index": index, "item": item}
                FRAME.set(Frame(dict(table), loop_frame, scope, {**named, cfg.name: scope}))
                at = path + (f"[{index}]",)
                # A one-runnable body is run directly: no chain frame per item.
                outcome = await (
                    run(ctx, single, item, at + (single,), branch)
                    if single is not None
                    else chain(ctx, body, item, at, branch)
                )
                if isinstance(outcome, Done):
                    done[index] = outcome.output
                    ctx.decide(
                        "map", cfg.name, where, f"{key}[{index}]", index=index, status="done", output=outcome.output
                    )
                    if active:
                        ctx.emit(
                            "map_item", path, None, map=cfg.name, index=index, status="done", output=outcome.output
                        )
                elif isinstance(outcome, Fail):
                    info = error_info(outcome.error)
                    ctx.decide("map", cfg.name, where, f"{key}[{index}]", index=index, status="error", error=info)
                    if active:
                        ctx.emit("map_item", path, None, map=cfg.name, index=index, status="error", error=info)
                    # A budget that fails the run fails it whatever the map collects.
                    if fail_fast or getattr(outcome.error, "kind", None) == "budget_exceeded":
                        if not failure:
                            failure.append((index, outcome))
                            me = asyncio.current_task()
                            for task in workers:
                                if task is not me:
                                    task.cancel()
                        return
                    ctx.warn(
                        "map_item_failed",
                        f"item {index} of map `{cfg.name}` failed: {info['message']}"
                        + (" (dropped from its list)" if cfg.on_error == "drop" else ""),
                        path,
                        index=index,
                        kind=info["kind"],
                    )
                    if cfg.on_error == "drop":
                        dropped.add(index)
                        progress["dropped"] = sorted(dropped)
                    else:
                        done[index] = {"error": info}
                else:
                    stops.append(outcome)  # waits for a human; the other items go on
        finally:
            left -= 1
            if (left == 0 or failure) and not finished.done():
                finished.set_result(None)

    size = left = min(max(1, cfg.concurrency), len(kept) - len(done) - len(dropped))
    if size > 0:
        create_task = loop.create_task
        workers.extend(create_task(work()) for _ in range(size))
        try:
            await finished
        except asyncio.CancelledError:
            for task in workers:
                task.cancel()
            await asyncio.wait(workers)
            raise
        # After a fast failure the others were cancelled; as gather does, the map ends after them. One
        # cancelled before it started never reports in, so this waits on the tasks, not on the count.
        running = [t for t in workers if not t.done()]
        if running:
            await asyncio.wait(running)
        for task in workers:
            if not task.cancelled() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
    if failure:
        index, failed = failure[0]
        error = failed.error
        if isinstance(error, AgentError) and not error.path:
            error.path = path + (f"[{index}]",)
        return failed
    if stops:
        return merge_stops(stops)  # type: ignore[arg-type]
    del ctx.progress[key]
    return Done([done[i] for i in kept if i in done])


def _kept(ctx: RunContext, cfg: MapNode, items: list[Any], path: tuple[str, ...], key: str) -> list[int]:
    """The indexes `filter` holds for, in order; each skipped one is a decision (and an event) of its own."""
    assert cfg.filter is not None
    kept = []
    for index, item in enumerate(items):
        try:
            ok = holds(cfg.filter, item, {})
        except ConditionError as exc:
            raise AgentError("map_filter_invalid", f"map `{cfg.name}`, item {index}: {exc}", path=path) from None
        if ok:
            kept.append(index)
            continue
        ctx.decide("map", cfg.name, list(path), f"{key}[{index}]", index=index, status="skipped")
        if ctx.bus.active:
            ctx.emit("map_item", path, None, map=cfg.name, index=index, status="skipped")
    return kept
