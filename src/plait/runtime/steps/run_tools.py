"""The model's tool calls → tool results appended in call order (the only step with tool side effects).

A call is never executed when its arguments did not parse, when they fail the
tool's schema (the refusal goes back as its result, with a warning), when it
comes past the agent's `max_tool_calls` in its reply (refused the same way), or
when a human rejected it. Delegated agents run here too; if one stops for a human,
the calls that finished are kept and this step returns the interrupt, so a
resume re-runs only what is still open.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

from ..context import AgentRun, RunContext
from ..outcomes import CONTINUE, Done, Fail, Interrupt, Outcome, Pause, merge_stops
from ..providers.base import Message, TextPart, ToolCall
from ..state import refuse_write
from ..store.effects import journaled_tool_call
from ..scope import as_record
from ..tools import ToolOutcome


async def run_tools(run: AgentRun, ctx: RunContext) -> Outcome:
    response = run.response
    if response is None or not response.message.tool_calls:
        return CONTINUE
    calls = response.message.tool_calls
    limit = run.agent.max_tool_calls
    if limit is not None and len(calls) > limit:
        _refuse_past(run, ctx, calls[limit:], limit)
    todo = [c for c in calls if c.id not in run.results]
    if len(todo) == 1:
        stops = [await _run_one(run, ctx, todo[0])]
    else:
        stops = await asyncio.gather(*(_run_one(run, ctx, c) for c in todo))
    stopped = [s for s in stops if s is not None]
    if stopped:
        return merge_stops(stopped)
    results = run.results
    outcomes = run.outcomes
    for call in calls:
        outcome = results[call.id]
        outcomes.append((call, outcome))
        run.messages.append(
            Message(
                "tool", [TextPart(outcome.content)], tool_call_id=call.id, name=call.name, is_error=outcome.is_error
            )
        )
        if outcome.expand:
            run.expand.extend(outcome.expand)
    for call in calls:  # a hand-off ends the agent's run; the target runs next (src/plait/runtime/handoff.py)
        tool = run.toolset.tools.get(call.name)
        if tool is not None and tool.run.get("type") == "handoff" and not results[call.id].is_error:
            return Done(results[call.id].content, "handoff", tool.run["target"], response.finish_reason)
    return CONTINUE


def _refuse_past(run: AgentRun, ctx: RunContext, extra: Sequence[ToolCall], limit: int) -> None:
    """The calls of one reply past `max_tool_calls`: never run, each answered with an error result the model reads
    (the reply's first `limit` calls, in its order, run as usual)."""
    for call in extra:
        if call.id in run.results:
            continue  # refused before a resume
        run.results[call.id] = ToolOutcome(
            # Never echoes the call (its name is the model's text): `plait cost` bounds this text (compiler/bounds.py).
            f"this call was not run: a reply may make at most {limit} tool call{'s' if limit != 1 else ''} "
            "(max_tool_calls). Ask for it again in your next reply if you still need it.",
            True,
        )
        ctx.report.add_tool_call(call.name, call.arguments, True, run.agent.name, run.path)
    ctx.warn(
        "tool_calls_refused",
        f"agent `{run.agent.name}`: {len(extra)} tool call(s) past max_tool_calls ({limit}) were not run",
        run.path,
        run.agent,
        refused=[call.name for call in extra],
    )


async def _run_one(run: AgentRun, ctx: RunContext, call: ToolCall) -> Interrupt | Pause | None:
    tool = run.toolset.tools.get(call.name)
    arguments = call.arguments
    outcome: ToolOutcome | None = None
    decision = ctx.decisions.get(f"{run.key}:{call.id}") if call.name in run.toolset.approval else None
    if tool is None:
        known = ", ".join(f"`{n}`" for n in run.toolset.tools) or "none"
        outcome = ToolOutcome(f"unknown tool `{call.name}`; the tools you can call are: {known}", True)
    elif call.malformed or arguments is None:
        outcome = ToolOutcome(
            f"the arguments of this call to `{call.name}` are not valid JSON, so the tool was not run: {call.raw_arguments!r}. "
            "Call it again with a complete JSON object.",
            True,
        )
    elif decision is not None and decision.action == "reject":
        outcome = ToolOutcome(decision.message or f"a human rejected this call to `{call.name}`; it was not run.", True)
    else:
        if decision is not None and decision.action == "edit":
            arguments = decision.arguments or {}
        if run.agent.validate_arguments and tool.parameters:
            refusal = ctx.tools.check(tool, arguments)
            if refusal is not None:
                ctx.warn(
                    "tool_arguments_invalid",
                    f"agent `{run.agent.name}`: arguments of `{call.name}` do not match its schema",
                    run.path,
                    run.agent,
                    tool=call.name,
                )
                outcome = ToolOutcome(refusal, True)
    if outcome is None:
        assert tool is not None and arguments is not None  # each branch above that leaves them unset sets `outcome`
        if tool.run.get("type") == "handoff":
            outcome = ToolOutcome(f"Handed over to `{tool.run['target']}`.", False)
        elif tool.run.get("type") == "agent":
            delegated = await _delegate(run, ctx, call, tool.run["agent"], arguments)
            if not isinstance(delegated, ToolOutcome):
                return delegated
            outcome = delegated
        else:
            timeout = tool.timeout
            if run.agent.tool_timeout and (timeout is None or run.agent.tool_timeout < timeout):
                timeout = run.agent.tool_timeout
            if tool.run.get("type") == "mcp" and not ctx.tools.serves(tool):
                # Started before the journal's intent, so a server that cannot start fails the run, not the call.
                await ctx.mcp_pool().start(tool.run["server"])
            if ctx.journal is None:
                outcome = await ctx.tools.execute(tool, arguments, timeout, ctx.state, mcp=ctx.mcp)
            else:  # intent before, completion after, replayed on a resume (src/plait/runtime/store/effects.py)
                journaled = await journaled_tool_call(ctx, run, call, tool, arguments, timeout)
                if isinstance(journaled, Pause):
                    return journaled
                outcome = journaled
            if outcome.state and ctx.program.state is not None:
                refusal = refuse_write(call.name, outcome.state, ctx.program.state)
                if refusal is not None:
                    ctx.warn("state_write_refused", refusal, run.path, run.agent, tool=call.name)
                    outcome = ToolOutcome(refusal, True)
    run.results[call.id] = outcome
    ctx.report.add_tool_call(call.name, arguments, outcome.is_error, run.agent.name, run.path)
    if ctx.bus.active:
        ctx.emit(
            "tool_call_end",
            run.path,
            run.agent,
            call_id=call.id,
            name=call.name,
            is_error=outcome.is_error,
            content=outcome.content[:500],
            **({"replayed": True} if outcome.replayed else {}),
        )
    return None


async def _delegate(
    run: AgentRun, ctx: RunContext, call: ToolCall, agent: str, arguments: dict
) -> ToolOutcome | Interrupt | Pause:
    if ctx.run_runnable is None:
        raise RuntimeError("a RunContext that delegates to agents needs run=compose.run_runnable")
    tool = run.toolset.tools[call.name]
    # A declared agent tool (`run = agent(NAME)`) hands its arguments over as the agent's input record; the
    # implicit one hands over the `task` text its caller's model wrote.
    task: Any = dict(arguments) if "returns" in tool.run else arguments.get("task", "")
    child = await ctx.run_runnable(ctx, agent, task, run.path + (f"{agent}[{call.id}]",), run.branch)
    if isinstance(child, Done):
        value = returned(child.output, tool.run.get("returns") or ())
        return ToolOutcome(as_content(value), False, value=value)
    if isinstance(child, Fail):
        error = child.error
        ctx.warn(
            "delegate_failed",
            f"delegated agent `{agent}` failed: {error}",
            run.path,
            run.agent,
            agent=agent,
            kind=getattr(error, "kind", None),
        )
        return ToolOutcome(f"agent `{agent}` failed: {error}", True)
    assert isinstance(child, Interrupt | Pause), child  # a runnable's loop runs while its outcome is CONTINUE
    return child


def returned(output: Any, parts: Sequence[str]) -> Any:
    """The part of a delegated agent's output its tool returns (`returns = output.flights`): the whole output for
    no parts. The compiler checked the path against the agent's declared output; a record-shaped text reply
    (an agent without `output` that answered JSON) is read as its record."""
    value = output
    for part in parts:
        value = as_record(value)
        if not isinstance(value, dict) or part not in value:
            return None  # an optional field the agent left out
        value = value[part]
    return value


def as_content(value: Any) -> str:
    """What the calling model reads: text as it is, anything else as JSON (never a Python repr)."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
