"""A model request for one agent → the response of the model that served it: fallbacks, timeouts, streaming.

What every model call shares, whoever makes it: the agent loop's `call_model`
step, the one-shot calls of steps and judges in `compose.py`, and a `plait
test` judge (`model_only_request`). Every request is made by `model_request`
and its settings filled per serving model by `_prepare` (the runnable's, else
the model's). Fallback models are tried once
each; a per-call timeout bounds each; streamed deltas are forwarded as events;
the serving model is recorded in history and report; a cut-off reply is
described by the limit it reached (`cut_off`).
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable

from plait.core.kinds import AgentNode, ModelNode, journaled_fields

from .budget import call_cost
from .context import RunContext
from .providers.base import (
    FALLBACK_KINDS,
    Message,
    ModelRequest,
    ModelResponse,
    ProviderError,
    ResponseDone,
    TextDelta,
    ToolCallDelta,
    ToolCallStart,
    ToolSpec,
    final_answer_text,
)
from .providers.continuation import RETENTION, continuation_id
from .providers.structured import output_via
from .structured_output import check_output, guidance, output_cut_off, output_invalid, wire_schema

__all__ = [
    "TRUNCATED",
    "check_budget",
    "complete_with_fallbacks",
    "cut_off",
    "direct_call",
    "model_only_request",
    "model_request",
    "served",
    "structured_answer",
]

#: The settings a runnable and its model both may set, the runnable's winning (`attr(journaled=True)`): each a
#: field of the request by the same name.
_SETTINGS = journaled_fields(ModelNode)

#: Finish reasons of an incomplete response: cut off at the token limit, or stopped by a filter.
TRUNCATED = frozenset({"length", "content_filter"})


def cut_off(request: ModelRequest, response: ModelResponse) -> tuple[str, str]:
    """(why a truncated response stopped, what to change), in the spec's words: the `max_tokens` it reached."""
    if response.finish_reason != "length":
        return "a content filter stopped it", "change the prompt or the model"
    if request.max_tokens is not None:
        return f"it reached max_tokens = {request.max_tokens}", "raise `max_tokens` (on the runnable or its model)"
    return "it reached the provider's output limit (no `max_tokens` is set)", "set a larger `max_tokens`"


def model_request(
    agent: AgentNode,
    messages: list[Message],
    *,
    tools: list[ToolSpec] | None = None,
    system: str | None = None,
    step: int = 1,
    path: tuple[str, ...] = (),
) -> ModelRequest:
    """The one constructor of a model request: an agent's turn, a step, a judge, a retry all start here.

    The settings that depend on which model serves it (id, timeout, temperature,
    max_tokens, tool_choice) are left empty: `_prepare` fills them per model, so a
    fallback gets its own model's defaults under the same runnable's settings.
    """
    return ModelRequest(
        "",
        messages,
        tools or [],
        system=system,
        agent=agent.name,
        step=step,
        output_schema=wire_schema(agent.output_schema()),
        path=path,
    )


def model_only_request(
    config: ModelNode, messages: list[Message], *, system: str | None, output_schema: dict[str, Any]
) -> ModelRequest:
    """A request made for a model alone, no runnable around it (a `plait test` judge): built as every other
    call is, so it carries that model's settings and nothing a runnable would add."""
    agent = AgentNode(name=config.name, model=config.name)
    request = model_request(agent, messages, system=system)
    request.output_schema = output_schema  # a plain JSON Schema, not a declared `output` type
    _prepare(request, agent, config)
    return request


async def complete_with_fallbacks(
    ctx: RunContext, agent: AgentNode, request: ModelRequest, path: tuple[str, ...]
) -> ModelResponse:
    """Primary then each fallback, once each, per call; only failures another model could survive move on.

    In a journaled run the call is recorded before and after, or replayed on a resume (src/plait/runtime/store/effects.py).
    """
    try:
        if ctx.journal is not None:
            from .store.effects import journaled_model_call

            return await journaled_model_call(ctx, agent, request, path, _with_fallbacks)
        return await _with_fallbacks(ctx, agent, request, path)
    except BaseException:
        if ctx.report.budget is not None:  # a call that failed lets go of what it held of its budgets
            ctx.report.budget.release(request)
        raise


async def _with_fallbacks(
    ctx: RunContext, agent: AgentNode, request: ModelRequest, path: tuple[str, ...]
) -> ModelResponse:
    models = (agent.model, *agent.fallback)
    fallback_on = agent.fallback_on if agent.fallback_on is not None else FALLBACK_KINDS
    failed: list[dict[str, Any]] = []
    for index, name in enumerate(models):
        if index or ctx.journal is None:  # a journaled call's first model is checked before its request is recorded
            check_budget(ctx, name, request, path)
        _prepare(request, agent, ctx.program.models[name])
        started: list[bool] = [False]
        try:
            if ctx.stream or request.timeout or ctx.bus.active:
                response = await _one_call(ctx, agent, name, request, path, started)
            else:  # nobody streaming or listening and no timeout: direct_call's case, for an agent with fallbacks
                response = await ctx.provider(name).complete(request)
        except ProviderError as error:
            last = index == len(models) - 1
            # A streamed step that already showed output cannot be spliced with another model's answer.
            if last or started[0] or error.kind not in fallback_on:
                raise
            ctx.warn(
                "model_fallback",
                f"agent `{agent.name}`: model `{name}` failed ({error.kind}); trying `{models[index + 1]}`",
                path,
                agent,
                **{"from": name, "to": models[index + 1], "kind": error.kind},
            )
            if ctx.journal is not None:  # the request as this model was asked, before the next one is prepared
                key = ctx.journal.keys.key(request)
                failed.append({"model": name, "kind": error.kind, "message": str(error), "request_key": key})
            continue
        response.failed_over = failed
        served(ctx, agent, name, request, response, path)
        return response
    raise AssertionError("unreachable: the loop returns or raises")


async def structured_answer(
    ctx: RunContext, agent: AgentNode, request: ModelRequest, response: ModelResponse, path: tuple[str, ...]
) -> ModelResponse:
    """A one-shot call's answer checked against `agent.output` and its `validate`, asked again while it misses
    (`retry_malformed`).

    The agent loop does the same turn by turn in `call_model`; a step or judge
    has no loop, so its retries happen here. `response.output` holds the record
    (or, for a text answer a validator accepted, the text).
    """
    schema = agent.output_schema()
    attempt = 0
    while True:
        if schema is not None and response.finish_reason in TRUNCATED:
            # Not malformed: the same request would be cut at the same place, so it is not retried.
            raise output_cut_off(agent, *cut_off(request, response), path)
        value, errors, rejected = await checked_answer(agent, final_answer_text(response.message), schema, path)
        if not errors:
            response.output = value
            return response
        if rejected:
            rejected_answer(ctx, agent, path, attempt + 1, errors[0])
        if attempt >= agent.retry_malformed:
            raise output_invalid(agent, errors, attempt + 1, path, rejected)
        attempt += 1
        request.messages = [
            *request.messages,
            response.message,
            retry_message(ctx, agent, path, attempt, errors, schema, rejected),
        ]
        request.step += 1
        response = await complete_with_fallbacks(ctx, agent, request, path)


async def checked_answer(
    agent: AgentNode, text: str, schema: dict[str, Any] | None, path: tuple[str, ...]
) -> tuple[Any, list[str], bool]:
    """(the answer, [], False) when it matches `output` and its validator accepts it; else (None, what is wrong,
    whether the validator is what rejected it)."""
    if schema is not None:
        value, errors = check_output(text, schema)
        if errors:
            return None, errors, False
    else:
        value = text
    if agent.validate is not None:
        from .validators import rejection  # imported only by a spec with a validator

        reason = await rejection(agent.name, agent.validate, value, path)
        if reason is not None:
            return None, [reason], True
    return value, [], False


def rejected_answer(ctx: RunContext, agent: AgentNode, path: tuple[str, ...], answer: int, reason: str) -> None:
    """A validator's rejection of answer number `answer` as a decision: journaled with the run, a line of `trace`."""
    target = (agent.validate or {}).get("target")
    key = f"{'/'.join(path)}#validate{answer}"
    ctx.decide("validate", agent.name, path, key, answer=answer, validator=target, reason=reason)


def retry_message(
    ctx: RunContext,
    agent: AgentNode,
    path: tuple[str, ...],
    attempt: int,
    errors: list[str],
    schema: dict[str, Any] | None,
    rejected: bool,
) -> Message:
    """Retry number `attempt` of an answer that missed, warned of → what the model is told before it answers
    again: the validator's reason, or the schema errors and schema."""
    ctx.warn(
        "output_rejected_retried" if rejected else "output_invalid_retried",
        f"agent `{agent.name}` retried an answer that "
        + (f"its validator rejected: {errors[0]}" if rejected else "missed its `output`")
        + f" (attempt {attempt})",
        path,
        agent,
        attempt=attempt,
        errors=errors,
    )
    if rejected or schema is None:
        from .validators import REJECTED

        return Message.user(REJECTED.format(attempt=attempt, total=agent.retry_malformed, reason=errors[0]))
    return Message.user(guidance(attempt, agent.retry_malformed, errors, schema))


def direct_call(ctx: RunContext, agent: AgentNode, request: ModelRequest) -> Awaitable[ModelResponse] | None:
    """The provider's call, ready to await, when it needs none of the fallback, timer and event plumbing.

    That is the common case: one model, no per-call timeout, nobody streaming or
    listening. Otherwise None: go through complete_with_fallbacks. The caller
    records the response with `served`.
    """
    if agent.fallback or ctx.stream or ctx.bus.active or ctx.journal is not None or ctx.report.budget is not None:
        return None
    config = ctx.program.models[agent.model]
    if config.timeout:
        return None
    _prepare(request, agent, config)
    return ctx.provider(agent.model).complete(request)


def check_budget(ctx: RunContext, name: str, request: ModelRequest, path: tuple[str, ...]) -> None:
    """BudgetExceeded (src/plait/runtime/budget.py) when a call to model `name` would take a budget around `path`
    over its limit; nothing when the run has no budget."""
    ledger = ctx.report.budget
    if ledger is not None and ledger.scopes:
        ledger.check(name, ctx.program.models[name].catalogue, request, path)


def _prepare(request: ModelRequest, agent: AgentNode, config: ModelNode) -> None:
    """Point the request at one model: its id, its per-call timeout, and each setting the runnable's, else the model's.

    The one place the runnable's settings and its model's combine, for every
    kind of call and recomputed for each model a call falls back to; a setting
    neither declares is left to the provider (None is never sent).

    Server state (`previous_response_id`) is offered by the providers' one gate,
    `continuation_id`: only to the model that issued it (history names the
    declaration that served each turn, so a backup is never handed the
    primary's state) and only within that provider's retention.
    """
    request.previous_response_id = continuation_id(
        request.messages, config.name, retention=RETENTION.get(config.provider)
    )
    request.model = config.model_id
    request.timeout = config.timeout
    for name in _SETTINGS:
        own = getattr(agent, name)
        setattr(request, name, own if own is not None else getattr(config, name))
    if not request.tools:  # a choice only with tools to choose among: no wire accepts one without them
        request.tool_choice = None
    request.output_via = output_via(config) if request.output_schema is not None else "native"


async def _one_call(
    ctx: RunContext, agent: AgentNode, name: str, request: ModelRequest, path: tuple[str, ...], started: list[bool]
) -> ModelResponse:
    provider = ctx.provider(name)
    timeout = request.timeout
    if not timeout:
        # No deadline of ours: a provider's own TimeoutError passes through, as on the direct path.
        return await _fetch(ctx, agent, provider, request, path, started)
    try:
        async with asyncio.timeout(timeout):
            return await _fetch(ctx, agent, provider, request, path, started)
    except TimeoutError:
        # Named as a transport failure is: the call it gave up on (an HTTP provider's endpoint; none for others).
        endpoint = getattr(provider, "endpoint", None)
        called = f" (calling {endpoint(request, ctx.stream)})" if endpoint is not None else ""
        raise ProviderError(
            "timeout", f"model `{name}` did not answer within {timeout:g}s{called}", model=name
        ) from None


async def _fetch(
    ctx: RunContext,
    agent: AgentNode,
    provider: Any,
    request: ModelRequest,
    path: tuple[str, ...],
    started: list[bool],
) -> ModelResponse:
    bus = ctx.bus
    if not ctx.stream:
        response = await provider.complete(request)
        if bus.active:
            for call in response.message.tool_calls:
                ctx.emit(
                    "tool_call_start",
                    path,
                    agent,
                    call_id=call.id,
                    name=call.name,
                    arguments=call.arguments,
                    step=request.step,
                )
        return response
    async for event in provider.stream(request):
        started[0] = True
        if isinstance(event, ResponseDone):
            return event.response
        if isinstance(event, TextDelta):
            ctx.emit("text", path, agent, text=event.text, phase=event.phase, step=request.step)
        elif isinstance(event, ToolCallDelta):
            ctx.emit(
                "tool_call_delta",
                path,
                agent,
                call_id=event.call_id,
                arguments=event.arguments,
                step=event.step or request.step,
            )
        elif isinstance(event, ToolCallStart):
            ctx.emit(
                "tool_call_start",
                path,
                agent,
                call_id=event.call_id,
                name=event.name,
                arguments=event.arguments,
                step=event.step or request.step,
            )
    raise ProviderError("server_error", "stream ended without a final response", model=request.model)


def served(
    ctx: RunContext,
    agent: AgentNode,
    name: str,
    request: ModelRequest,
    response: ModelResponse,
    path: tuple[str, ...],
    replayed: bool = False,
) -> None:
    """Attribute the response to the model that served it (history and report) and record the call.

    `replayed`: the reply came from the journal on a resume; its `step_end` says so, so a view marks it.
    """
    wire_model = response.model  # what the provider says answered, before it is renamed to the declaration
    response.message.model = name
    response.model = name
    report = ctx.report
    report.model_calls += 1
    usage = response.usage
    report.input_tokens += usage.input_tokens
    report.output_tokens += usage.output_tokens
    model = ctx.program.models.get(name)
    cost = call_cost(model.catalogue if model is not None else None, usage.input_tokens, usage.output_tokens)
    if cost is None:
        report.unpriced_calls += 1
    else:
        report.cost_usd += cost
    if report.budget is not None:
        report.budget.charge(path, cost, usage.input_tokens + usage.output_tokens, request)
    report.add_step(
        agent.name, path, request.step, name, response.finish_reason, usage.input_tokens, usage.output_tokens, cost
    )
    if ctx.bus.active:
        ctx.emit(
            "step_end",
            path,
            agent,
            step=request.step,
            model=name,
            finish_reason=response.finish_reason,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cost_usd=cost,
            request_model=request.model,
            response_model=wire_model,
            **({"replayed": True} if replayed else {}),
        )
