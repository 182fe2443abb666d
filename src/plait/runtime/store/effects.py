"""A model or tool call under a journal → its result, recorded before and after, or replayed.

The effects ledger. A model call writes its request, waits for the journal to
be durable, calls, and records the reply (or the error). A tool call writes
its intent, waits, runs, and records its completion. Nothing external happens
between a completion and the next barrier (the next model call, tool call or
code step waits for it; a stop flushes it), so the completion is durable before
anything else is done, and costs no commit of its own. On a resume, replies and completed results
are replayed from the journal and nothing is called again; a tool call with
an intent but no completion has an unknown outcome: it runs again only when
the tool is `idempotent`, else the run pauses for a person to decide
(`--decide ID=retry|skip`).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from ..budget import call_cost
from ..history import from_json, message_from_json, message_to_json, to_json
from ..model_call import check_budget, served  # model_call imports this module only when a call is made
from ..outcomes import Done, Pause, PendingEffect
from ..providers.base import ModelRequest, ModelResponse, ProviderError, Usage
from ..tools import ToolOutcome
from .run_journal import idempotency_key

if TYPE_CHECKING:
    from plait.core.kinds import AgentNode, StepNode, ToolNode
    from ..context import AgentRun, RunContext
    from ..providers.base import ToolCall

__all__ = ["SKIPPED", "journaled_code_step", "journaled_model_call", "journaled_tool_call"]

SKIPPED = (
    "the outcome of this call to `{name}` is unknown (the run stopped while it ran) and a person chose not to run it "
    "again; assume it may or may not have happened"
)


async def journaled_model_call(
    ctx: RunContext,
    agent: AgentNode,
    request: ModelRequest,
    path: tuple[str, ...],
    call: Callable[[RunContext, AgentNode, ModelRequest, tuple[str, ...]], Awaitable[ModelResponse]],
) -> ModelResponse:
    """`call` (the fallback loop, which records the serving model itself) runs only when the journal has no reply."""
    journal = ctx.journal
    position = journal.model_position(path, request.step)
    hit = journal.reply(position)
    if hit is not None:
        response = ModelResponse(
            message_from_json(hit["message"]),
            hit["finish_reason"],
            hit.get("raw_finish_reason"),
            Usage(*hit.get("usage", (0, 0))),
            hit["model"],
            hit.get("response_id"),
            hosted=hit.get("hosted"),  # what its hosted tools reported: read again as `{{TOOL.citations}}`
        )
        served(ctx, agent, hit["model"], request, response, path, replayed=True)
        return response
    check_budget(ctx, agent.model, request, path)  # before the request is recorded: a refused call leaves no row
    # What was asked: a digest per message, and a message's body only the first time this run sends it
    # (requests.py), so `plait runs diff` can say which message two runs sent differently.
    config = ctx.program.models.get(agent.model)
    journal.record(
        "model_request",
        position,
        {
            "agent": agent.name,
            "step": request.step,
            "model": agent.model,
            "target": f"{config.provider}/{config.model_id}" if config is not None else None,
            "messages": len(request.messages),
            **journal.requests.describe(request),
        },
    )
    await journal.durable()
    started = time.perf_counter()
    try:
        response = await call(ctx, agent, request, path)
    except ProviderError as error:
        journal.record(
            "model_error",
            position,
            {
                "model": error.model or agent.model,
                "kind": error.kind,
                "message": str(error),
                "latency_ms": _ms(started),
                "providers": ctx.provider_snapshots(),
                "request_key": journal.keys.key(request),
            },
        )
        raise
    usage = response.usage
    served_by = ctx.program.models.get(response.model or "")  # `served` named the declaration that answered
    journal.record(
        "model_reply",
        position,
        {
            "model": response.model,
            "message": message_to_json(response.message),
            "finish_reason": response.finish_reason,
            "raw_finish_reason": response.raw_finish_reason,
            "response_id": response.response_id,
            "usage": (usage.input_tokens, usage.output_tokens),
            # USD at the serving model's price (None: unpriced), as `served` charged it: what `plait trace` shows.
            "cost_usd": call_cost(getattr(served_by, "catalogue", None), usage.input_tokens, usage.output_tokens),
            "latency_ms": _ms(started),
            "providers": ctx.provider_snapshots(),
            # The request as the serving model was asked (cassettes/request.py): `plait runs export --cassette`.
            "request_key": journal.keys.key(request),
            **({"hosted": response.hosted} if response.hosted else {}),
            # The models that failed before it, each with its own request key: a cassette replays those failures.
            **({"failed_over": response.failed_over} if response.failed_over else {}),
        },
    )
    return response


async def journaled_tool_call(
    ctx: RunContext, run: AgentRun, call: ToolCall, tool: ToolNode, arguments: dict[str, Any], timeout: float | None
) -> ToolOutcome | Pause:
    journal = ctx.journal
    position = journal.tool_position(run.key, run.steps, call.id)
    done = journal.completed(position)
    if done is not None:
        return _outcome(done)
    attempt = 1
    earlier = journal.intent(position)
    if earlier is not None:  # started by an earlier attempt of the run, never finished: outcome unknown
        pid = f"{run.key}:{call.id}"
        attempt = earlier.get("attempt", 1) + 1
        action, answers = journal.effect_decisions.get(pid, ("", 0))
        if action == "skip" and answers == attempt - 1:
            outcome = ToolOutcome(SKIPPED.format(name=call.name), True)
            journal.record("tool_completed", position, _completion(call, outcome, 0.0) | {"skipped": True})
            await journal.durable()
            return outcome
        if not tool.idempotent and not (action == "retry" and answers == attempt - 1):
            journal.unknown[pid] = (position, attempt - 1)
            reason = (
                f"the outcome of tool call {pid} (`{call.name}`) is unknown: the run stopped while it ran, and `{call.name}` "
                f"is not idempotent, so it is not run again on its own. Decide with --decide {pid}=retry (run it again) "
                f"or --decide {pid}=skip (tell the model it may not have run)"
            )
            journal.record("pause", position, {"reason": reason, "call": pid, "tool": call.name})
            return Pause(reason, [PendingEffect(pid, call.name, call.id, arguments)])
    key = idempotency_key(journal.run_id, position)
    journal.record(
        "tool_intent",
        position,
        {
            "tool": call.name,
            "call_id": call.id,
            "arguments": arguments,
            "attempt": attempt,
            "idempotent": tool.idempotent,
            "idempotency_key": key,
        },
    )
    await journal.durable()
    started = time.perf_counter()
    outcome = await ctx.tools.execute(tool, arguments, timeout, ctx.state, idempotency_key=key, mcp=ctx.mcp)
    journal.record("tool_completed", position, _completion(call, outcome, _ms(started)))
    return outcome


async def journaled_code_step(
    ctx: RunContext,
    step: StepNode,
    input: Any,
    path: tuple[str, ...],
    run: Callable[[StepNode, Any, tuple[str, ...]], Awaitable[Done]],
) -> Done:
    """A code step's result replayed when it finished before; run (again, if it was cut off) when not.

    A code step has no `idempotent` attribute: one cut off mid-call is redone as the step in flight, so
    effects that must not repeat belong in a tool.
    """
    journal = ctx.journal
    position = journal.model_position(path, 0)
    done = journal.completed(position)
    if done is not None:
        return Done(done["value"])
    journal.record(
        "tool_intent",
        position,
        {"step": step.name, "code": True, "attempt": 1 + (journal.intent(position) is not None)},
    )
    await journal.durable()
    started = time.perf_counter()
    outcome = await run(step, input, path)
    journal.record(
        "tool_completed",
        position,
        {
            "step": step.name,
            "code": True,
            "value": outcome.output,
            "content": None,
            "is_error": False,
            "latency_ms": _ms(started),
        },
    )
    return outcome


def _completion(call: ToolCall, outcome: ToolOutcome, latency: float) -> dict[str, Any]:
    value = outcome.value
    return {
        "tool": call.name,
        "call_id": call.id,
        "content": outcome.content,
        "is_error": outcome.is_error,
        "state": outcome.state,
        "expand": to_json(outcome.expand) if outcome.expand else None,
        "value": value if isinstance(value, (str, int, float, bool, list, dict, type(None))) else outcome.content,
        "latency_ms": latency,
    }


def _outcome(done: dict[str, Any]) -> ToolOutcome:
    expand = done.get("expand")
    return ToolOutcome(
        done["content"],
        done["is_error"],
        done.get("state"),
        from_json(expand) if expand else None,
        done.get("value"),
        replayed=True,
    )


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
