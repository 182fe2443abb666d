"""A loop, its input and a graph path → the outcome of running its body until `until` holds or the bound is hit.

Every iteration gets the loop's input as `{{input}}` and a frame with
`loop.iteration` (from 1), `loop.last` (null on the first) and `loop.history`
(earlier outputs, oldest first); its body runs at `path/#N`, so each
iteration's runnables are memoised apart. After each iteration the condition's
value is recorded (report decision, `loop_iteration` event) and the history is
kept in the run's progress: a resumed run starts again at the iteration that
was running, with the history it had.

A route case that goes to `break` (plait 0.3) ends the iteration where it
stands: the loop's output is what that route received, and its decision says
`exit: "break"` (the third way out, beside the condition met and the bound
reached). A break that leaves an outer loop ends this one on the way, and is
passed up as it came.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from .conditions import ConditionError, condition_text, holds
from plait.core.kinds import LoopNode
from .context import RunContext
from .errors import AgentError
from .outcomes import Done, Fail, Outcome
from .scope import FRAME, Frame, outputs

__all__ = ["ChainRunner", "run_loop"]

#: compose.run_chain, passed in (compose imports this module).
ChainRunner = Callable[[RunContext, tuple[str, ...], Any, tuple[str, ...], "str | None"], Awaitable[Outcome]]


async def run_loop(
    ctx: RunContext, loop: LoopNode, input: Any, path: tuple[str, ...], branch: str | None, chain: ChainRunner
) -> Outcome:
    bound = loop.max_iterations
    if bound is None:  # a compiled spec cannot get here (P312); a LoopNode built in Python can
        raise ValueError(f"loop `{loop.name}` needs max_iterations")
    key = "/".join(path)
    progress = ctx.progress.get(key)
    if progress is None:
        progress = ctx.progress[key] = {"kind": "loop", "history": []}
    history: list[Any] = progress["history"]
    parent = FRAME.get()
    table = outputs(ctx)
    condition = condition_text(loop.until) if loop.until is not None else None
    last = Done(None)
    while len(history) < bound:
        iteration = len(history) + 1
        scope = {"iteration": iteration, "last": history[-1] if history else None, "history": list(history)}
        named = dict(parent.named) if parent is not None and parent.named else {}
        named[loop.name] = scope
        frame = Frame(table, scope, parent.map if parent is not None else None, named)
        token = FRAME.set(frame)
        try:
            outcome = await chain(ctx, loop.body, input, path + (f"#{iteration}",), branch)
        finally:
            FRAME.reset(token)
        if not isinstance(outcome, Done) or outcome.reason == "max_steps":
            return outcome  # a stop for a human, a failure or a bounded stop: progress stays for a resume
        if outcome.reason == "break":
            return _left(ctx, loop, outcome, path, key, iteration, condition, history)
        last = outcome
        output = outcome.output
        history.append(output)
        met = None
        if loop.until is not None:
            try:
                met = holds(loop.until, output, table)
            except ConditionError as exc:
                return Fail(
                    AgentError("loop_condition_invalid", f"loop `{loop.name}`, iteration {iteration}: {exc}", path=path)
                )
        ctx.decide("loop", loop.name, path, f"{key}#{iteration}", iteration=iteration, condition=condition, holds=met)
        if ctx.bus.active:
            ctx.emit("loop_iteration", path, None, loop=loop.name, iteration=iteration, condition=condition, holds=met)
        if met:
            break
    else:
        if loop.until is not None and loop.on_exhausted != "last":
            return Fail(
                AgentError(
                    "loop_exhausted",
                    f"loop `{loop.name}` ran {loop.max_iterations} iteration(s) and `{condition}` never held "
                    "(on_exhausted = fail)",
                    path=path,
                )
            )
        if loop.until is not None:
            ctx.warn(
                "loop_exhausted",
                f"loop `{loop.name}` ran {loop.max_iterations} iteration(s) and `{condition}` never held; "
                "going on with the last output",
                path,
                loop=loop.name,
            )
    del ctx.progress[key]
    return Done(history[-1] if history else None, last.reason, finish_reason=last.finish_reason)


def _left(
    ctx: RunContext,
    loop: LoopNode,
    outcome: Done,
    path: tuple[str, ...],
    key: str,
    iteration: int,
    condition: str | None,
    history: list[Any],
) -> Done:
    """A `break` ended this iteration: record the exit and finish with what the route received (or, for a break
    out of an outer loop, pass it on up)."""
    leaves = outcome.until_result
    output = outcome.output
    history.append(output)
    details: dict[str, Any] = {"iteration": iteration, "condition": condition, "holds": None, "exit": "break"}
    if leaves is not None and leaves != loop.name:
        details["leaves"] = leaves
    ctx.decide("loop", loop.name, path, f"{key}#{iteration}", **details)
    if ctx.bus.active:
        ctx.emit("loop_iteration", path, None, loop=loop.name, **details)
    del ctx.progress[key]
    if "leaves" in details:
        return Done(output, "break", until_result=leaves)
    return Done(output, "done", finish_reason=outcome.finish_reason)
