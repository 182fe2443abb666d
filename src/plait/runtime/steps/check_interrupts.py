"""The model's tool calls → an interrupt listing the calls that still need a human decision.

Ids are `<graph path>:<call id>`, unique across the run, so calls pending in
parallel branches and delegated agents can all be answered in one resume.
"""

from __future__ import annotations

from ..context import AgentRun, RunContext
from ..outcomes import CONTINUE, Interrupt, Outcome, PendingAsk, PendingCall


async def check_interrupts(run: AgentRun, ctx: RunContext) -> Outcome:
    approval = run.toolset.approval
    if not approval or run.response is None:
        return CONTINUE
    pending: list[PendingCall | PendingAsk] = [
        PendingCall(f"{run.key}:{call.id}", run.path, run.agent.name, call.id, call.name, call.arguments, run.branch)
        for call in run.response.message.tool_calls
        if call.name in approval
        and not call.malformed
        and call.id not in run.results
        and f"{run.key}:{call.id}" not in ctx.decisions
    ]
    if not pending:
        return CONTINUE
    if ctx.bus.active:
        ctx.emit("interrupt", run.path, run.agent, pending=[p.to_dict() for p in pending])
    return Interrupt(pending)
