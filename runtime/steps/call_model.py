"""The conversation so far → one model response appended to it (the only step that talks to a provider).

Also here, because each is about how one model call goes: the pair-aware
window, the per-step timeout, fallback models, streamed deltas forwarded as
events, reflect-and-retry on malformed tool calls, and a truncated response
ending the run before any of its tool calls run.
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable

from ..config import AgentConfig
from ..context import AgentRun, RunContext
from ..errors import AgentError
from ..history import window
from ..templates import render
from ..outcomes import CONTINUE, NEXT_TURN, Done, Fail, Outcome
from ..providers.base import (
    FALLBACK_KINDS,
    Message,
    ModelRequest,
    ModelResponse,
    ProviderError,
    ResponseDone,
    TextDelta,
    ToolCallDelta,
    ToolCallStart,
    final_answer_text,
)

__all__ = ["call_model", "complete_with_fallbacks", "direct_call", "served", "RETRY_ON", "TRUNCATED"]

#: Finish reasons that end the run: the response is incomplete, its calls are not run.
TRUNCATED = frozenset({"length", "content_filter"})
#: Finish reasons reflect-and-retry answers (a content filter is a decision, not a mistake).
RETRY_ON = frozenset({"malformed_tool_call"})

GUIDANCE = (
    "Attempt {attempt} of {total}: your previous reply contained a malformed tool call "
    "(its arguments were not valid JSON) and was discarded. Do not repeat the same call: "
    "reply again with a tool call whose arguments are one complete, valid JSON object "
    "matching the tool's schema, or answer without tools."
)


async def call_model(run: AgentRun, ctx: RunContext) -> Outcome:
    agent = run.agent
    run.steps += 1
    if ctx.bus.active:
        ctx.emit("step_start", run.path, agent, step=run.steps)
    system = run.system.build()
    if system and "{{" in system:
        system = render(system, input=run.input, state=ctx.state, strict=False)
    request = ModelRequest(
        "",
        window(run.messages, agent.keep_last),
        run.toolset.specs,
        system=system,
        temperature=agent.temperature,
        max_tokens=agent.max_tokens,
        agent=agent.name,
        step=run.steps,
    )
    call = direct_call(ctx, agent, request)
    if call is None:
        response = await complete_with_fallbacks(ctx, agent, request, run.path)
    else:  # awaited here rather than through complete_with_fallbacks: one frame less on every round
        response = await call
        served(ctx, agent, agent.model, request, response, run.path)
    finish = response.finish_reason

    if finish in RETRY_ON and agent.retry_malformed > 0:
        if run.streak >= agent.retry_malformed:
            return Fail(
                AgentError(
                    "malformed_tool_call",
                    f"agent `{agent.name}` produced malformed tool calls {run.streak + 1} times in a row; "
                    f"the retry budget (retry_malformed = {agent.retry_malformed}) is spent; raise `retry_malformed` to allow more",
                    path=run.path,
                )
            )
        run.streak += 1
        # The failed turn is not appended: the model should not learn from its own broken output.
        run.messages.append(Message.user(GUIDANCE.format(attempt=run.streak, total=agent.retry_malformed)))
        ctx.warn("malformed_tool_call_retried", f"agent `{agent.name}` retried a malformed tool call (attempt {run.streak})", run.path, agent, attempt=run.streak)
        return NEXT_TURN
    if finish not in RETRY_ON:
        run.streak = 0

    run.messages.append(response.message)
    if finish in TRUNCATED:
        ctx.warn(
            "response_truncated",
            f"agent `{agent.name}`: the model's response was cut off ({finish}); the run ends and its tool calls are not run",
            run.path,
            agent,
            finish_reason=finish,
        )
        return Done(final_answer_text(response.message), "done", finish_reason=finish)
    run.response = response
    return CONTINUE


async def complete_with_fallbacks(ctx: RunContext, agent: AgentConfig, request: ModelRequest, path: tuple[str, ...]) -> ModelResponse:
    """Primary then each fallback, once each, per call; only failures another model could survive move on."""
    models = (agent.model, *agent.fallback)
    fallback_on = agent.fallback_on if agent.fallback_on is not None else FALLBACK_KINDS
    for index, name in enumerate(models):
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
            continue
        served(ctx, agent, name, request, response, path)
        return response
    raise AssertionError("unreachable: the loop returns or raises")


def direct_call(ctx: RunContext, agent: AgentConfig, request: ModelRequest) -> Awaitable[ModelResponse] | None:
    """The provider's call, ready to await, when it needs none of the fallback, timer and event plumbing.

    That is the common case: one model, no per-call timeout, nobody streaming or
    listening. Otherwise None: go through complete_with_fallbacks. The caller
    records the response with `served`.
    """
    if agent.fallback or ctx.stream or ctx.bus.active:
        return None
    config = ctx.program.models[agent.model]
    if config.timeout:
        return None
    _prepare(request, agent, config)
    return ctx.provider(agent.model).complete(request)


def _prepare(request: ModelRequest, agent: AgentConfig, config: Any) -> None:
    """Point the request at one model: its id, its per-call timeout, its defaults where the agent sets none.

    Server state (`previous_response_id`) is offered only to the model that
    issued it: a backup must never be handed the primary's continuation.
    """
    request.previous_response_id = None
    for message in reversed(request.messages):
        if message.role == "assistant":
            if message.response_id and message.model == config.name:
                request.previous_response_id = message.response_id
            break
    request.model = config.model_id
    request.timeout = config.timeout
    if agent.temperature is None:
        request.temperature = config.temperature
    if agent.max_tokens is None:
        request.max_tokens = config.max_tokens


async def _one_call(ctx: RunContext, agent: AgentConfig, name: str, request: ModelRequest, path: tuple[str, ...], started: list[bool]) -> ModelResponse:
    provider = ctx.provider(name)
    timeout = request.timeout
    if not timeout:
        # No deadline of ours: a provider's own TimeoutError passes through, as on the direct path.
        return await _fetch(ctx, agent, provider, request, path, started)
    try:
        async with asyncio.timeout(timeout):
            return await _fetch(ctx, agent, provider, request, path, started)
    except TimeoutError:
        raise ProviderError("timeout", f"model `{name}` did not answer within {timeout:g}s", model=name) from None


async def _fetch(ctx: RunContext, agent: AgentConfig, provider: Any, request: ModelRequest, path: tuple[str, ...], started: list[bool]) -> ModelResponse:
    bus = ctx.bus
    if not ctx.stream:
        response = await provider.complete(request)
        if bus.active:
            for call in response.message.tool_calls:
                ctx.emit("tool_call_start", path, agent, call_id=call.id, name=call.name, arguments=call.arguments, step=request.step)
        return response
    async for event in provider.stream(request):
        started[0] = True
        if isinstance(event, ResponseDone):
            return event.response
        if isinstance(event, TextDelta):
            ctx.emit("text", path, agent, text=event.text, phase=event.phase, step=request.step)
        elif isinstance(event, ToolCallDelta):
            ctx.emit("tool_call_delta", path, agent, call_id=event.call_id, arguments=event.arguments, step=event.step or request.step)
        elif isinstance(event, ToolCallStart):
            ctx.emit("tool_call_start", path, agent, call_id=event.call_id, name=event.name, arguments=event.arguments, step=event.step or request.step)
    raise ProviderError("server_error", "stream ended without a final response", model=request.model)


def served(ctx: RunContext, agent: AgentConfig, name: str, request: ModelRequest, response: ModelResponse, path: tuple[str, ...]) -> None:
    """Attribute the response to the model that served it (history and report) and record the call."""
    response.message.model = name
    response.model = name
    report = ctx.report
    report.model_calls += 1
    usage = response.usage
    report.input_tokens += usage.input_tokens
    report.output_tokens += usage.output_tokens
    report._steps.append((agent.name, path, request.step, name, response.finish_reason, usage.input_tokens, usage.output_tokens))
    if ctx.bus.active:
        ctx.emit("step_end", path, agent, step=request.step, model=name, finish_reason=response.finish_reason,
                 input_tokens=usage.input_tokens, output_tokens=usage.output_tokens)
