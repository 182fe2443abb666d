"""An agent with `handoff = [...]`, its input and a graph path → its own outcome, or the outcome of the runnable it
handed control to (plait 0.3).

Each hand-off target is a `transfer_to_NAME` tool the model may call (made by
src/plait/runtime/handoff_tools.py); calling one ends the agent's run (src/plait/runtime/steps/run_tools.py) and the
target runs with the agent's own input, as a route's case runs with the
route's. The choice is recorded (a `handoff` decision) and kept in the run's
progress, so a resumed run goes back into the same target without asking the
model again.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from plait.core.kinds import AgentNode

from .agent import run_agent
from .context import RunContext
from .outcomes import Done, Outcome
from .scope import outputs

__all__ = ["run_handing_off"]


async def run_handing_off(
    ctx: RunContext, agent: AgentNode, input: Any, path: tuple[str, ...], branch: str | None = None
) -> Outcome:
    if not agent.handoff:
        return await run_agent(ctx, agent, input, path, branch)
    key = "/".join(path)
    chosen = ctx.progress.get(key)
    if chosen is None:
        outcome = await run_agent(ctx, agent, input, path, branch)
        if not (isinstance(outcome, Done) and outcome.reason == "handoff"):
            return outcome
        target = outcome.until_result
        chosen = ctx.progress[key] = {"kind": "handoff", "target": target, "hosted": outcome.hosted}
        ctx.decide("handoff", agent.name, path, key, target=target)
    assert ctx.run_runnable is not None  # compose hands itself in before any agent runs
    target, hosted = chosen["target"], chosen.get("hosted")
    if hosted:  # what the agent's hosted tools found is readable in the target too (`{{web.citations}}`)
        outputs(ctx).update(hosted)
    outcome = await ctx.run_runnable(ctx, target, input, path + (target,), branch)
    if isinstance(outcome, Done):
        del ctx.progress[key]
        if hosted:
            outcome = replace(outcome, hosted={**hosted, **(outcome.hosted or {})})
    return outcome
