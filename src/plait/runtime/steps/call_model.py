"""The conversation so far → one model response appended to it (the only step that talks to a provider).

Also here, because each is about what one turn's response means: the
pair-aware window, reflect-and-retry on malformed tool calls and on answers that
miss the declared `output`, a truncated response ending the run before any of
its tool calls run, and a warning for any ending that is not a plain stop. How
the call itself is made (fallbacks, timeouts, streaming) is `model_call.py`.
"""

from __future__ import annotations

from plait.core.hosted import empty_report

from ..budget import BudgetExceeded, stop_for
from ..context import AgentRun, RunContext
from ..errors import AgentError
from ..history import window
from ..model_call import (
    TRUNCATED,
    checked_answer,
    complete_with_fallbacks,
    cut_off,
    direct_call,
    model_request,
    rejected_answer,
    retry_message,
    served,
)
from ..outcomes import CONTINUE, NEXT_TURN, Done, Fail, Outcome
from ..providers.base import Message, ModelResponse, final_answer_text
from ..providers.finish import NORMAL
from ..structured_output import output_cut_off, output_invalid
from ..templates import render

__all__ = ["call_model", "RETRY_ON", "TRUNCATED"]

# TRUNCATED (model_call's) are the finish reasons that end the run: the response is incomplete, its calls not run.
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
        system = render(system, input=run.input, state=ctx.state, strict=False, scope=ctx.scope)
    request = model_request(
        agent,
        window(run.messages, agent.keep_last),
        tools=run.toolset.specs,
        system=system,
        step=run.steps,
        path=run.path,
    )
    if run.toolset.hosted:
        request.hosted = list(run.toolset.hosted.values())
    try:
        call = direct_call(ctx, agent, request)
        if call is None:
            response = await complete_with_fallbacks(ctx, agent, request, run.path)
        else:  # awaited here rather than through complete_with_fallbacks: one frame less on every round
            response = await call
            served(ctx, agent, agent.model, request, response, run.path)
    except BudgetExceeded as exc:
        run.steps -= 1  # the call never started: a resume with a raised budget makes it as this step
        return stop_for(ctx, exc, run.path, agent)
    finish = response.finish_reason
    if run.toolset.hosted:
        _reported(run, ctx, response)

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
        ctx.warn(
            "malformed_tool_call_retried",
            f"agent `{agent.name}` retried a malformed tool call (attempt {run.streak})",
            run.path,
            agent,
            attempt=run.streak,
        )
        return NEXT_TURN
    if (
        (agent.output_schema() is not None or agent.validate is not None)
        and not response.message.tool_calls
        and finish not in TRUNCATED
        and finish not in RETRY_ON
    ):
        missed = await _check_output(run, ctx, response)
        if missed is not None:
            return missed
    if finish not in RETRY_ON:
        run.streak = 0

    run.messages.append(response.message)
    if finish in TRUNCATED:
        why, fix = cut_off(request, response)
        ctx.warn(
            "response_truncated",
            f"agent `{agent.name}`: the model's response was cut off ({_said(response)}: {why}); the run ends and its tool calls are not run",
            run.path,
            agent,
            finish_reason=finish,
            raw_finish_reason=response.raw_finish_reason,
        )
        return _cut_short(run, why, fix) or Done(final_answer_text(response.message), "done", finish_reason=finish)
    if finish not in NORMAL and finish not in RETRY_ON:
        # Gemini's UNEXPECTED_TOOL_CALL, MALFORMED_RESPONSE...: not a stop, whatever the text says.
        empty = "" if response.message.content or response.message.tool_calls else " and gave no answer"
        ctx.warn(
            "unexpected_finish",
            f"agent `{agent.name}`: the model stopped with `{_said(response)}`{empty}",
            run.path,
            agent,
            finish_reason=finish,
            raw_finish_reason=response.raw_finish_reason,
        )
    run.response = response
    return CONTINUE


async def _check_output(run: AgentRun, ctx: RunContext, response: ModelResponse) -> Outcome | None:
    """None when the answer matches the declared `output` and its `validate` accepts it (then `response.output`
    holds it); else the retry or failure."""
    agent = run.agent
    schema = agent.output_schema()
    value, errors, rejected = await checked_answer(agent, final_answer_text(response.message), schema, run.path)
    if not errors:
        response.output = value
        return None
    if rejected:
        rejected_answer(ctx, agent, run.path, run.streak + 1, errors[0])
    if run.streak >= agent.retry_malformed:
        return Fail(output_invalid(agent, errors, run.streak + 1, run.path, rejected))
    run.streak += 1
    # Kept, unlike a malformed call: the model corrects an answer best when it sees it beside what was wrong.
    run.messages.append(response.message)
    run.messages.append(retry_message(ctx, agent, run.path, run.streak, errors, schema, rejected))
    return NEXT_TURN


def _cut_short(run: AgentRun, why: str, fix: str) -> Fail | None:
    """A cut-off reply is no success when the agent owed more: its `until` call, or an answer in its `output`."""
    agent = run.agent
    if agent.until:
        targets = ", ".join(f"`{t}`" for t in agent.until)
        return Fail(
            AgentError(
                "until_tool_not_called",
                f"agent `{agent.name}` stopped without calling {targets} (its `until` contract): "
                f"its reply was cut off ({why}); {fix}",
                path=run.path,
            )
        )
    if agent.output_schema() is not None:
        return Fail(output_cut_off(agent, why, fix, run.path))
    return None


def _said(response: ModelResponse) -> str:
    """The provider's own word for the ending, after plait's name for it when the two differ."""
    raw = response.raw_finish_reason
    finish = response.finish_reason
    if not raw or raw == finish:
        return finish
    return raw if raw.lower() == finish else f"{finish}: {raw}"


def _reported(run: AgentRun, ctx: RunContext, response: ModelResponse) -> None:
    """What this call's hosted tools reported, added to the run's reports by tool name (an empty report for a
    tool the model did not use, so `{{TOOL.citations}}` reads an empty list rather than nothing)."""
    said = response.hosted or {}
    for name, tool in run.toolset.hosted.items():
        kind = tool["hosted"]
        report = run.hosted.setdefault(name, empty_report(kind))
        found = said.get(kind) or {}
        for key, items in found.items():
            if isinstance(items, list) and isinstance(report.get(key), list):
                report[key] += [item for item in items if item not in report[key]]
        queries = found.get("queries") or found.get("runs")
        if queries:  # the trajectory names it as a call, as it does a tool plait runs
            ctx.report.add_tool_call(name, {"hosted": kind}, False, run.agent.name, run.path)
