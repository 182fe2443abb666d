"""The model's tool calls → an interrupt listing the calls that still need a human decision.

Ids are `<graph path>:<call id>`, unique across the run, so calls pending in
parallel branches and delegated agents can all be answered in one resume. A
tool whose `approval` is a condition asks only for a call whose arguments it
holds for (one it cannot decide, a missing argument, asks); a call an earlier
`approve_same` answer covers (same tool, same arguments) does not ask again.
"""

from __future__ import annotations

from typing import Any

from plait.core.kinds import ToolNode

from ..conditions import ConditionError, holds
from ..context import AgentRun, RunContext
from ..outcomes import CONTINUE, Interrupt, Outcome, PendingAsk, PendingCall, approved_before


async def check_interrupts(run: AgentRun, ctx: RunContext) -> Outcome:
    approval = run.toolset.approval
    if not approval or run.response is None:
        return CONTINUE
    pending: list[PendingCall | PendingAsk] = [
        PendingCall(f"{run.key}:{call.id}", run.path, run.agent.name, call.id, call.name, call.arguments, run.branch)
        # A call past `max_tool_calls` is refused without running (run_tools), so no one is asked about it.
        for call in run.response.message.tool_calls[: run.agent.max_tool_calls]
        if call.name in approval
        and not call.malformed
        and call.id not in run.results
        and f"{run.key}:{call.id}" not in ctx.decisions
        and (call.name in run.agent.approval or _asks(run.toolset.tools.get(call.name), call.arguments))
        and not approved_before(ctx.decisions, call.name, call.arguments)
    ]
    if not pending:
        return CONTINUE
    if ctx.bus.active:
        ctx.emit("interrupt", run.path, run.agent, pending=[p.to_dict() for p in pending])
    return Interrupt(pending)


def _asks(tool: ToolNode | None, arguments: Any) -> bool:
    condition = getattr(tool, "approval", True)
    if isinstance(condition, bool):
        return True  # gated by the tool's `required`
    try:
        return holds(condition, arguments, {})
    except ConditionError:
        return True  # undecidable: a person decides, never the absence of a field
